package dev.ledger.dependency;

import dev.ledger.config.LedgerConfig;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Every circuit breaker of the service, made here from a typed {@link Policy}: the breaker
 * {@code redis} (or one per primary of a Redis Cluster) and {@code commands}. Each logs one line per
 * change of state (never one per call), and all of them are in /q/metrics as
 * {@code resilience4j_circuitbreaker_*} with their name.
 *
 * <p>Resilience4j's breaker rather than SmallRye Fault Tolerance's guard: a breaker here is a state
 * machine the caller asks for permission and tells the outcome, on the caller's own thread, which a
 * call on a Vert.x event loop needs (docs/design.md has the measured comparison).
 */
@ApplicationScoped
public class Breakers {
    private static final Logger LOG = Logger.getLogger(Breakers.class);

    private final CircuitBreakerRegistry registry = CircuitBreakerRegistry.ofDefaults();

    /**
     * When a breaker opens: over the last {@code window} calls, once at least {@code minimumCalls} were
     * made, a share of {@code failureRatio} failures opens it; after {@code delay} it lets
     * {@code trialCalls} through, which decide whether it closes again. {@code halfOpensByItself}: it
     * half-opens when the delay is over (a timer), rather than at the first call after it, for a
     * breaker whose opening stops the calls that would half-open it (a paused consumer).
     */
    public record Policy(int window, int minimumCalls, double failureRatio, Duration delay, int trialCalls,
                         boolean halfOpensByItself) {
        /** The fast path's store's breakers ({@code ledger.fast-path.breaker.*}): one trial call after the delay. */
        public static Policy of(LedgerConfig.FastPath.Breaker settings) {
            return new Policy(settings.requestVolumeThreshold(), settings.requestVolumeThreshold(), settings.failureRatio(),
                    settings.delay(), 1, false);
        }
    }

    /**
     * The breaker {@code name}, made once with {@code policy}; {@code onChange} hears every change of state
     * after it is logged ({@code opened} as a warning saying what goes without the dependency meanwhile).
     */
    public CircuitBreaker create(String name, Policy policy, String whileOpen, Consumer<CircuitBreaker.State> onChange) {
        CircuitBreaker breaker = registry.circuitBreaker(name, CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(policy.window())
                .minimumNumberOfCalls(policy.minimumCalls())
                .failureRateThreshold((float) (policy.failureRatio() * 100))
                .waitDurationInOpenState(policy.delay())
                .automaticTransitionFromOpenToHalfOpenEnabled(policy.halfOpensByItself())
                .permittedNumberOfCallsInHalfOpenState(policy.trialCalls())
                .writableStackTraceEnabled(false)
                .build());
        breaker.getEventPublisher().onStateTransition(event -> {
            CircuitBreaker.State state = event.getStateTransition().getToState();
            if (state == CircuitBreaker.State.OPEN) {
                LOG.warnf("Circuit breaker '%s' open: %s", name, whileOpen);
            } else {
                LOG.infof("Circuit breaker '%s' %s", name, state.name().toLowerCase().replace('_', '-'));
            }
            onChange.accept(state);
        });
        return breaker;
    }

    /** A breaker made earlier, by name. */
    public Optional<CircuitBreaker> named(String name) {
        return registry.find(name);
    }

    public List<CircuitBreaker> all() {
        return List.copyOf(registry.getAllCircuitBreakers());
    }

    /** Whether {@code failure} is a call an open breaker refused: nothing was sent. */
    public static boolean refused(Throwable failure) {
        return failure instanceof CallNotPermittedException;
    }

    /**
     * {@code call} (already bounded by its {@link Deadline}, so that a timeout counts as a failure) through
     * {@code breaker}: refused at once while it is open, unless {@code evenIfOpen} (a call that settles a
     * key a request holds), which is then sent but not counted; otherwise its outcome and duration are
     * told to the breaker, and a cancelled call gives its permission back. Asks for permission when
     * called: call it inside a deferred Uni, so that an unsubscribed call holds none.
     */
    public static <T> Uni<T> guarded(CircuitBreaker breaker, boolean evenIfOpen, Supplier<Uni<T>> call) {
        boolean permitted = breaker.tryAcquirePermission();
        if (!permitted && !evenIfOpen) {
            return Uni.createFrom().failure(refusal(breaker));
        }
        Uni<T> sent = call.get();
        if (!permitted) {
            return sent;
        }
        long start = System.nanoTime();
        return sent
                .onItemOrFailure().invoke((item, failure) -> {
                    long nanos = System.nanoTime() - start;
                    if (failure == null) {
                        breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
                    } else {
                        breaker.onError(nanos, TimeUnit.NANOSECONDS, failure);
                    }
                })
                .onCancellation().invoke(breaker::releasePermission);
    }

    /** The failure of a call an open breaker refused. */
    public static RuntimeException refusal(CircuitBreaker breaker) {
        return CallNotPermittedException.createCallNotPermittedException(breaker);
    }

    /**
     * In /q/metrics, per breaker name, read when scraped: {@code resilience4j_circuitbreaker_state} (1 for the
     * state it is in, as Resilience4j's own binder names them), {@code _failure_rate}, {@code _buffered_calls} and
     * {@code _not_permitted_calls}. Not Resilience4j's {@code TaggedCircuitBreakerMetrics}: it also times every
     * call through an event per call (1.5 % of a replay's CPU, docs/performance.md), and every call of a
     * dependency is timed already, by its result, in {@code ledger_dependency_calls_seconds}.
     */
    @Produces
    @Singleton
    MeterBinder breakerMetrics() {
        return meters -> {
            registry.getAllCircuitBreakers().forEach(breaker -> bind(meters, breaker));
            registry.getEventPublisher().onEntryAdded(added -> bind(meters, added.getAddedEntry()));
        };
    }

    private static void bind(MeterRegistry meters, CircuitBreaker breaker) {
        Tags name = Tags.of("name", breaker.getName());
        for (CircuitBreaker.State state : CircuitBreaker.State.values()) {
            Gauge.builder("resilience4j.circuitbreaker.state", breaker, b -> b.getState() == state ? 1 : 0)
                    .tags(name).tag("state", state.name().toLowerCase(Locale.ROOT))
                    .description("The states of the circuit breaker").register(meters);
        }
        Gauge.builder("resilience4j.circuitbreaker.failure.rate", breaker, b -> b.getMetrics().getFailureRate())
                .tags(name).description("The failure rate of the circuit breaker (-1 until enough calls)").register(meters);
        Gauge.builder("resilience4j.circuitbreaker.buffered.calls", breaker, b -> b.getMetrics().getNumberOfSuccessfulCalls())
                .tags(name).tag("kind", "successful").description("The calls in the breaker's window, by kind").register(meters);
        Gauge.builder("resilience4j.circuitbreaker.buffered.calls", breaker, b -> b.getMetrics().getNumberOfFailedCalls())
                .tags(name).tag("kind", "failed").description("The calls in the breaker's window, by kind").register(meters);
        Gauge.builder("resilience4j.circuitbreaker.not.permitted.calls", breaker, b -> b.getMetrics().getNumberOfNotPermittedCalls())
                .tags(name).description("Calls refused while the breaker was open, since it last closed").register(meters);
    }
}
