package dev.ledger.idempotency;

import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.smallrye.faulttolerance.api.CircuitBreakerName;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;
import org.eclipse.microprofile.faulttolerance.Timeout;

/**
 * The one door to Redis: every script call is bounded and counted by the circuit breaker
 * {@code redis}, so a slow or absent Redis fails fast and the service goes on through Postgres.
 */
@ApplicationScoped
public class RedisScripts {
    private final ReactiveRedisDataSource redis;

    public RedisScripts(ReactiveRedisDataSource redis) {
        this.redis = redis;
    }

    @Timeout(300)
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 2000)
    @CircuitBreakerName("redis")
    Uni<Response> run(LuaScript script, String key, String... args) {
        return script.run(redis, key, args);
    }
}
