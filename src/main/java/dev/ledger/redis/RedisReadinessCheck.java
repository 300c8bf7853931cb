package dev.ledger.redis;

import dev.ledger.config.LedgerConfig;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;

import java.util.List;

/**
 * Readiness means "can serve". Without Redis the service still serves POSTs through Postgres
 * alone, so a Redis outage leaves it UP (Redis shown DOWN in the data) unless it is set to fail
 * closed, where it cannot serve POSTs and reports DOWN. Replaces Quarkus' own Redis check,
 * which would take the service out of rotation for an outage it survives. It pings through the
 * same clients as the idempotency store ({@link RedisNodes}), each ping bounded by
 * {@code ledger.readiness.timeout}; a node that gives no answer in time (a partition, a server that
 * accepts connections and answers nothing) counts as DOWN, with the reason in the data. In a Redis Cluster
 * every primary is pinged, each shown in the data; Redis is UP while all of them answer, and a cluster
 * fails closed (DOWN) only when none does, since every other primary's keys can still be served. Reported
 * while the store is Redis ({@code dev.ledger.fastpath.FastPathReadinessCheck}).
 */
@ApplicationScoped
public class RedisReadinessCheck implements AsyncHealthCheck {
    private final RedisNodes redis;
    private final LedgerConfig config;

    public RedisReadinessCheck(RedisNodes redis, LedgerConfig config) {
        this.redis = redis;
        this.config = config;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        String mode = config.fastPath().failClosed() ? "fail-closed" : "degrade-to-postgres";
        return redis.ping(config.readiness().timeout()).map(nodes -> {
            List<String> failures = nodes.values().stream().filter(answer -> !RedisNodes.UP.equals(answer)).toList();
            boolean up = failures.isEmpty();
            // failing closed, an instance still serves the keys of the primaries that answer
            boolean serves = !config.fastPath().failClosed() || failures.size() < nodes.size();
            HealthCheckResponseBuilder check = HealthCheckResponse.named("Redis (idempotency fast path)")
                    .status(serves)
                    .withData("redis", up ? "UP" : "DOWN").withData("mode", mode);
            if (redis.cluster()) {
                nodes.forEach((node, answer) -> check.withData(node, RedisNodes.UP.equals(answer) ? "UP" : "DOWN: " + answer));
            } else if (!up) {
                check.withData("reason", failures.get(0));
            }
            return check.build();
        });
    }
}
