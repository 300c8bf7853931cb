package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Deadline;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import io.smallrye.faulttolerance.api.TypedGuard;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.util.TypeLiteral;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * The one door to Redis: every script call is bounded by a timeout ({@link Deadline}, timed on
 * the caller's event loop) and counted by the circuit breaker {@code redis}, so a slow or absent
 * Redis fails fast and the service goes on through Postgres. The breaker is a SmallRye Fault
 * Tolerance guard built once, rather than interceptor annotations: on this path (two calls per
 * POST, one per replay) the interceptor's per-call machinery cost about a third of the service's
 * CPU per replay (see README, Performance).
 */
@ApplicationScoped
public class RedisScripts {
    private static final Logger LOG = Logger.getLogger(RedisScripts.class);
    private final ReactiveRedisDataSource redis;
    private final TypedGuard<Uni<Response>> guard;
    private final Duration timeout;

    public RedisScripts(ReactiveRedisDataSource redis, LedgerConfig config) {
        this.redis = redis;
        LedgerConfig.Redis settings = config.redis();
        this.timeout = settings.timeout();
        this.guard = TypedGuard.create(new TypeLiteral<Uni<Response>>() {
                })
                .withCircuitBreaker().name("redis")
                .requestVolumeThreshold(settings.breaker().requestVolumeThreshold())
                .failureRatio(settings.breaker().failureRatio())
                .delay(settings.breaker().delay().toMillis(), ChronoUnit.MILLIS)
                // one line per change of state, not one per request while Redis is away
                .onStateChange(state -> {
                    if (state == CircuitBreakerState.OPEN) {
                        LOG.warn("Circuit breaker 'redis' open: POSTs skip Redis until it answers again");
                    } else {
                        LOG.infof("Circuit breaker 'redis' %s", state.name().toLowerCase().replace('_', '-'));
                    }
                })
                .done()
                .withThreadOffload(false)
                .build();
    }

    Uni<Response> run(LuaScript script, String key, String... args) {
        // the deadline inside the guard: a timeout counts as a failure towards the breaker
        return guard.get(() -> Deadline.within(timeout, "Redis", () -> script.run(redis, key, args)));
    }
}
