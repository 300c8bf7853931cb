package dev.ledger.idempotency;

import dev.ledger.testing.DynamoDbLab;
import dev.ledger.testing.DynamoDbProfile;
import dev.ledger.testing.WithDynalite;
import dev.ledger.testing.FastPathStore;
import io.quarkus.arc.Arc;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.enterprise.context.ApplicationScoped;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** {@link IdempotencyTest}'s contract with DynamoDB (dynalite) as the store; and no Redis meanwhile. */
@QuarkusTest
@WithDynalite
@TestProfile(DynamoDbProfile.class)
class DynamoDbIdempotencyTest extends IdempotencyTest {
    @Override
    FastPathStore store() {
        return DynamoDbLab.store();
    }

    /** While the store is DynamoDB nothing of Redis is made, so nothing connects to it; readiness names DynamoDB. */
    @Test
    void noRedisIsMadeOrAsked() {
        var context = Arc.container().getActiveContext(ApplicationScoped.class);
        List<String> made = List.<Class<?>>of(dev.ledger.redis.RedisNodes.class, dev.ledger.redis.RedisCalls.class,
                        dev.ledger.redis.RedisIdempotencyStore.class, dev.ledger.redis.RedisSettledKeys.class,
                        dev.ledger.redis.RedisReadinessCheck.class).stream()
                .filter(type -> Arc.container().beanManager().getBeans(type).stream().anyMatch(bean -> context.get(bean) != null))
                .map(Class::getSimpleName)
                .toList();
        assertEquals(List.of(), made, "Redis beans made while the store is DynamoDB");
        String ready = given().when().get("/q/health/ready").then().statusCode(200)
                .body("checks.data.dynamodb", hasItem("UP")).extract().asString();
        assertFalse(ready.contains("\"redis\""), ready);
    }
}
