package dev.ledger.fastpath;

import dev.ledger.dynamodb.DynamoDbReadinessCheck;
import dev.ledger.redis.RedisReadinessCheck;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** The readiness of the chosen store ({@link FastPath}): Redis', or DynamoDB's in its place; never both. */
@Readiness
@ApplicationScoped
public class FastPathReadinessCheck implements AsyncHealthCheck {
    private final AsyncHealthCheck chosen;

    public FastPathReadinessCheck(FastPath fastPath, Instance<RedisReadinessCheck> redis, Instance<DynamoDbReadinessCheck> dynamo) {
        this.chosen = fastPath.dynamodb() ? dynamo.get() : redis.get();
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return chosen.call();
    }
}
