package dev.ledger.dynamodb;

import dev.ledger.config.LedgerConfig;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;

import java.time.Duration;
import java.util.Map;

/**
 * Readiness with DynamoDB in Redis' place (chosen by {@code dev.ledger.fastpath.FastPathReadinessCheck}):
 * as for Redis, an unreachable DynamoDB leaves the service UP (DynamoDB shown DOWN in the data) unless it
 * fails closed. One consistent read of a key nobody holds, bounded to 500 ms, outside the breaker.
 */
@ApplicationScoped
public class DynamoDbReadinessCheck implements AsyncHealthCheck {
    private static final Duration BOUND = Duration.ofMillis(500);

    private final DynamoDbCalls calls;
    private final LedgerConfig config;

    public DynamoDbReadinessCheck(DynamoDbCalls calls, LedgerConfig config) {
        this.calls = calls;
        this.config = config;
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        boolean failClosed = config.fastPath().failClosed();
        String table = config.idempotency().dynamodb().table();
        return Uni.createFrom().completionStage(() -> calls.client().getItem(get -> get.tableName(table)
                        .key(Map.of(DynamoDbIdempotencyStore.ID, software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("readiness")))))
                .ifNoItem().after(BOUND).fail()
                .map(ignored -> true)
                .onFailure().recoverWithItem(false)
                .map(up -> HealthCheckResponse.named("DynamoDB (idempotency fast path)")
                        .status(up || !failClosed)
                        .withData("dynamodb", up ? "UP" : "DOWN")
                        .withData("table", table)
                        .withData("mode", failClosed ? "fail-closed" : "degrade-to-postgres")
                        .build());
    }
}
