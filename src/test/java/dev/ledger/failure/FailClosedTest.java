package dev.ledger.failure;

import dev.ledger.dependency.Breakers;
import dev.ledger.testing.FailureLab;
import dev.ledger.testing.FailureLabProfile;
import dev.ledger.testing.Outcomes;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** ledger.fast-path.fail-closed=true: without Redis, POSTs are refused with 503 and readiness is DOWN. */
@QuarkusTest
@EnabledIfEnvironmentVariable(named = "QUARKUS_DATASOURCE_REACTIVE_URL", matches = ".+",
        disabledReason = "the failure lab proxies local servers (pom profile local-services); Dev Services run here")
@TestProfile(FailureLabProfile.FailClosed.class)
class FailClosedTest {
    @Inject
    Breakers breakers;

    @BeforeEach
    @AfterEach
    void healthyDependencies() {
        FailureLab.healAll();
        breakers.named("redis").orElseThrow().reset();
    }

    @Test
    void refusesPostsWhileRedisIsDownAndResumesAfter() {
        String account = newAccount();
        credit(account, 30, 1);
        String key = newKey();
        FailureLab.redisProxy().cut();
        Outcomes http = Outcomes.since("http");

        Response refused = postTransaction(account, key, transaction("CREDIT", 5, 2));
        assertEquals(503, refused.statusCode(), refused.asString());
        assertEquals("/problems/service-unavailable", refused.path("type"));
        assertNotNull(refused.header("Retry-After"));
        assertEquals(30, balance(account)); // reads still work, and nothing was applied
        given().when().get("/q/health/ready").then().statusCode(503).body("status", equalTo("DOWN"))
                .body("checks.data.redis", hasItem("DOWN"));

        FailureLab.redisProxy().heal();
        breakers.named("redis").orElseThrow().reset();
        Response accepted = postTransaction(account, key, transaction("CREDIT", 5, 2));
        assertEquals(201, accepted.statusCode(), accepted.asString());
        assertNull(accepted.header("Idempotent-Replayed"));
        assertEquals(35, balance(account));
        http.assertChanged(Map.of("unavailable", 1.0, "executed", 1.0));
        given().when().get("/q/health/ready").then().statusCode(200);
    }
}
