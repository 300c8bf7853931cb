package dev.ledger.dependency;

import dev.ledger.tracing.ClientSpans;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The one way the fast path's store is called, whichever it is (Redis, DynamoDB): each call asks its breaker
 * for permission when subscribed (refused at once, sending nothing, while it is open, unless the call settles
 * a key: {@link Breakers#guarded}), is traced as a client span under the request's ({@link ClientSpans}), timed
 * per kind of call in {@code ledger_dependency_calls_seconds} ({@link DependencyTimer}), and bounded
 * ({@link Deadline}), in that order, so that a store that is slow or away costs a request no more than its
 * bound and then nothing while its breaker is open.
 */
public final class GuardedCalls {
    private final String system;
    private final String named;
    private final Duration timeout;
    private final AttributeKey<String> detail;
    private final MeterRegistry registry;
    private final Tracer tracer;
    /** By kind of call: a handful, made at each one's first use. */
    private final Map<String, DependencyTimer> timers = new ConcurrentHashMap<>();

    /**
     * @param system  the store as metrics and spans name it ({@code redis}, {@code dynamodb})
     * @param named   the store as a timeout's message names it ({@code Redis}, {@code DynamoDB})
     * @param timeout the bound of every call
     * @param detail  the span attribute that names the kind of call
     */
    public GuardedCalls(String system, String named, Duration timeout, AttributeKey<String> detail, MeterRegistry registry,
                        Tracer tracer) {
        this.system = system;
        this.named = named;
        this.timeout = timeout;
        this.detail = detail;
        this.registry = registry;
        this.tracer = tracer;
    }

    /**
     * {@code call}, subscribed lazily, through {@code breaker}. {@code kind} names it in the metrics (reserve,
     * complete, ...), {@code operation} and {@code detail} in its span (the server's operation, e.g. EVALSHA,
     * PutItem, and what it ran), {@code server} the address it went to. {@code evenIfOpen}: sent while the
     * breaker is open too (a call that frees a key), counted by the breaker only when it permits it.
     */
    public <T> Uni<T> call(CircuitBreaker breaker, boolean evenIfOpen, String kind, String operation, String detail,
                           String server, Supplier<Uni<T>> call) {
        // permission is asked when the call is subscribed, so an unsubscribed call holds none
        return Uni.createFrom().deferred(() -> {
            DependencyTimer timer = timers.computeIfAbsent(kind, ignored -> DependencyTimer.of(registry, system, kind));
            return Breakers.guarded(breaker, evenIfOpen,
                    () -> ClientSpans.around(tracer, system, operation, server, this.detail, detail,
                            timer.time(() -> Deadline.within(timeout, named, call))));
        });
    }
}
