package dev.ledger.dependency;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How long one kind of call to a dependency takes, in /q/metrics:
 * {@code ledger_dependency_calls_seconds{dependency,call,result}} (count, sum and histogram buckets),
 * {@code result} {@code ok} or {@code failed} (a timeout included). Both meters are registered when the
 * timer is made, so a call pays for one clock read at each end.
 */
public final class DependencyTimer {
    public static final String NAME = "ledger.dependency.calls";
    private static final Duration[] BUCKETS = {
            Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5)};

    private final Timer ok;
    private final Timer failed;

    private DependencyTimer(Timer ok, Timer failed) {
        this.ok = ok;
        this.failed = failed;
    }

    /** {@code dependency}: {@code redis}, {@code postgres}, {@code rabbitmq}, {@code kafka}; {@code call}: what kind of call. */
    public static DependencyTimer of(MeterRegistry registry, String dependency, String call) {
        return of(registry, dependency, call, Tags.empty());
    }

    /** The same with tags of its own besides those three ({@code shard}: {@code dev.ledger.shard.Shards#tags}). */
    public static DependencyTimer of(MeterRegistry registry, String dependency, String call, Tags more) {
        return new DependencyTimer(timer(registry, dependency, call, "ok", more), timer(registry, dependency, call, "failed", more));
    }

    private static Timer timer(MeterRegistry registry, String dependency, String call, String result, Tags more) {
        return Timer.builder(NAME).tags(more).tag("dependency", dependency).tag("call", call).tag("result", result)
                .description("Calls to the service's dependencies, by how long they took")
                .serviceLevelObjectives(BUCKETS)
                .register(registry);
    }

    /** The call, timed from its subscription to its item or failure (a cancelled call is not counted). */
    public <T> Uni<T> time(Supplier<Uni<T>> call) {
        return Uni.createFrom().deferred(() -> {
            long start = System.nanoTime();
            return call.get().onItemOrFailure().invoke((item, failure) ->
                    (failure == null ? ok : failed).record(System.nanoTime() - start, TimeUnit.NANOSECONDS));
        });
    }
}
