package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Deadline;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The one door to Redis: every script call is bounded by a timeout ({@link Deadline}, timed on
 * the caller's event loop) and counted by the circuit breaker {@code redis}, so a slow or absent
 * Redis fails fast and the service goes on through Postgres. While the breaker is open, a call
 * fails at once with {@link CallNotPermittedException} and sends nothing.
 *
 * <p>The breaker is Resilience4j's: a state machine the call asks for permission and tells its
 * outcome, on the caller's thread. SmallRye Fault Tolerance's guard, used before, dispatches every
 * guarded call twice more on the Vert.x event loop (on the way in and on the way out); with its
 * timeout that was about a sixth of the CPU of a replay (docs/performance.md).
 */
@ApplicationScoped
public class RedisScripts {
    private static final Logger LOG = Logger.getLogger(RedisScripts.class);
    private final RedisPipeline redis;
    private final CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
    private final CircuitBreaker breaker;
    private final Duration timeout;

    public RedisScripts(RedisPipeline redis, LedgerConfig config) {
        this.redis = redis;
        LedgerConfig.Redis settings = config.redis();
        this.timeout = settings.timeout();
        this.breaker = breakers.circuitBreaker("redis", policy(settings.breaker()));
        // one line per change of state, not one per request while Redis is away
        breaker.getEventPublisher().onStateTransition(event -> {
            CircuitBreaker.State state = event.getStateTransition().getToState();
            if (state == CircuitBreaker.State.OPEN) {
                LOG.warn("Circuit breaker 'redis' open: POSTs skip Redis until it answers again");
            } else {
                LOG.infof("Circuit breaker 'redis' %s", state.name().toLowerCase().replace('_', '-'));
            }
        });
    }

    /**
     * The same policy the settings have always named: over the last {@code request-volume-threshold}
     * calls (and not before that many), a share of {@code failure-ratio} failures opens the breaker;
     * after {@code delay} one trial call decides whether it closes again.
     */
    private static CircuitBreakerConfig policy(LedgerConfig.Redis.Breaker settings) {
        return CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(settings.requestVolumeThreshold())
                .minimumNumberOfCalls(settings.requestVolumeThreshold())
                .failureRateThreshold((float) (settings.failureRatio() * 100))
                .waitDurationInOpenState(settings.delay())
                .permittedNumberOfCallsInHalfOpenState(1)
                .writableStackTraceEnabled(false)
                .build();
    }

    Uni<Response> run(LuaScript script, String key, String... args) {
        // permission is asked when the call is subscribed, so an unsubscribed call holds none
        return Uni.createFrom().deferred(() -> {
            if (!breaker.tryAcquirePermission()) {
                return Uni.createFrom().failure(CallNotPermittedException.createCallNotPermittedException(breaker));
            }
            long start = System.nanoTime();
            // the deadline inside the breaker: a timeout counts as a failure
            return Deadline.within(timeout, "Redis", () -> script.run(redis, key, args))
                    .onItemOrFailure().invoke((reply, failure) -> {
                        long nanos = System.nanoTime() - start;
                        if (failure == null) {
                            breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
                        } else {
                            breaker.onError(nanos, TimeUnit.NANOSECONDS, failure);
                        }
                    })
                    .onCancellation().invoke(breaker::releasePermission);
        });
    }

    /** The breaker, for tests: its state, and {@code reset()} to close it. */
    public CircuitBreaker breaker() {
        return breaker;
    }

    /** The breaker's state and calls in /q/metrics ({@code resilience4j_circuitbreaker_*}, name {@code redis}). */
    @Produces
    @Singleton
    MeterBinder breakerMetrics() {
        return TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(breakers);
    }
}
