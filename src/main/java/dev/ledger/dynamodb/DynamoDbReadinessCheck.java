package dev.ledger.dynamodb;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Deadline;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.util.Map;

/**
 * Readiness with DynamoDB in Redis' place (chosen by {@code dev.ledger.fastpath.FastPathReadinessCheck}):
 * as for Redis, an unreachable DynamoDB leaves the service UP (DynamoDB shown DOWN in the data) unless it
 * fails closed. One consistent read of a key nobody holds, bounded by {@code ledger.readiness.timeout}
 * ({@link Deadline}), outside the breaker; no answer in time counts as DOWN, with the reason in the data.
 */
@ApplicationScoped
public class DynamoDbReadinessCheck implements AsyncHealthCheck {
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
        return Deadline.within(config.readiness().timeout(), "DynamoDB", () -> Uni.createFrom().completionStage(() ->
                        calls.client().getItem(get -> get.tableName(table)
                                .key(Map.of(DynamoDbIdempotencyStore.ID, AttributeValue.fromS("readiness"))))))
                .map(ignored -> (String) null)
                .onFailure().recoverWithItem(failure -> String.valueOf(failure.getMessage()))
                .map(failure -> {
                    HealthCheckResponseBuilder check = HealthCheckResponse.named("DynamoDB (idempotency fast path)")
                            .status(failure == null || !failClosed)
                            .withData("dynamodb", failure == null ? "UP" : "DOWN")
                            .withData("table", table)
                            .withData("mode", failClosed ? "fail-closed" : "degrade-to-postgres");
                    if (failure != null) {
                        check.withData("reason", failure);
                    }
                    return check.build();
                });
    }
}
