package dev.ledger.health;

import dev.ledger.config.LedgerConfig;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import java.time.Duration;

/**
 * Readiness means "can serve". Without Redis the service still serves POSTs through Postgres
 * alone, so a Redis outage leaves it UP (Redis shown DOWN in the data) unless it is set to fail
 * closed, where it cannot serve POSTs and reports DOWN. Replaces Quarkus' own Redis check,
 * which would take the service out of rotation for an outage it survives. It pings through the
 * same {@code Redis} client as the idempotency store: injecting Quarkus' {@code ReactiveRedisDataSource}
 * as well would make Quarkus create a second client with its own pool for the same server.
 */
@Readiness
@ApplicationScoped
public class RedisReadinessCheck implements AsyncHealthCheck {
    private final Redis redis;
    private final LedgerConfig config;

    public RedisReadinessCheck(Redis redis, LedgerConfig config) {
        this.redis = redis;
        this.config = config;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        String mode = config.redis().failClosed() ? "fail-closed" : "degrade-to-postgres";
        return redis.send(Request.cmd(Command.PING))
                .ifNoItem().after(Duration.ofMillis(500)).fail()
                .map(pong -> HealthCheckResponse.named("Redis (idempotency fast path)").up()
                        .withData("redis", "UP").withData("mode", mode).build())
                .onFailure().recoverWithItem(failure -> HealthCheckResponse.named("Redis (idempotency fast path)")
                        .status(!config.redis().failClosed())
                        .withData("redis", "DOWN").withData("mode", mode).build());
    }
}
