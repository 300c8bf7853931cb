package dev.ledger.failure;

import dev.ledger.dependency.Breakers;
import dev.ledger.testing.FailureLab;
import dev.ledger.testing.FailureLabProfile;
import dev.ledger.testing.Outcomes;
import dev.ledger.testing.TcpProxy;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import java.time.Duration;
import java.util.Map;

import static dev.ledger.testing.LedgerApi.account;
import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.entryCount;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Postgres gone or slow: 503 within the bound, the key released, and exactly once after recovery. */
@QuarkusTest
@EnabledIfEnvironmentVariable(named = "QUARKUS_DATASOURCE_REACTIVE_URL", matches = ".+",
        disabledReason = "the failure lab proxies local servers (pom profile local-services); Dev Services run here")
@TestProfile(FailureLabProfile.class)
class PostgresFailureTest {
    @Inject
    Breakers breakers;

    @BeforeEach
    @AfterEach
    void healthyDependencies() {
        FailureLab.healAll();
        breakers.named("redis").orElseThrow().reset();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> given().when().get("/q/health/ready").statusCode() == 200);
    }

    private static void assertUnavailable(Response response) {
        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("application/problem+json", response.contentType());
        assertEquals("/problems/service-unavailable", response.path("type"));
        assertNotNull(response.header("Retry-After"));
    }

    /** Once PostgreSQL is back (readiness UP), the retry of a credit that got a 503 executes, once. */
    private static void assertTheRetryExecutesOnce(String account, String key, long amount) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> given().when().get("/q/health/ready").statusCode() == 200);
        Response retry = postTransaction(account, key, transaction("CREDIT", amount, 1));
        assertEquals(201, retry.statusCode(), retry.asString());
        assertNull(retry.header("Idempotent-Replayed"), "the key was released, so the retry executed");
        assertEquals(amount, balance(account));
    }

    @Test
    void postgresDownAnswers503ReleasesTheKeyAndRecovers() {
        String account = newAccount();
        String key = newKey();
        FailureLab.postgresProxy().cut();
        Outcomes http = Outcomes.since("http");

        long start = System.nanoTime();
        Response down = postTransaction(account, key, transaction("CREDIT", 70, 1));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertUnavailable(down);
        assertTrue(millis < RedisFailureTest.BOUND_MILLIS, "took " + millis + " ms");
        assertUnavailable(account(account)); // a read says so too, never a 500
        given().when().get("/q/health/ready").then().statusCode(503);
        given().when().get("/q/health/live").then().statusCode(200);

        FailureLab.postgresProxy().heal();
        assertTheRetryExecutesOnce(account, key, 70);
        http.assertChanged(Map.of("released", 1.0, "executed", 1.0));
    }

    /** PostgreSQL up but refusing connections with a FATAL error (here "database does not allow connections"): unavailable, not a bug. */
    @Test
    void postgresRefusingConnectionsAnswers503AndTheRetryAppliesOnce() {
        String account = newAccount();
        String key = newKey();
        FailureLab.postgresProxy().refuseWith(TcpProxy.postgresFatal("55000",
                "database \"postgres\" is not currently accepting connections"));

        assertUnavailable(postTransaction(account, key, transaction("CREDIT", 40, 1)));
        assertUnavailable(account(account));

        FailureLab.postgresProxy().heal();
        assertTheRetryExecutesOnce(account, key, 40);
    }

    @Test
    void slowPostgresAnswers503WithinTheBoundAndTheRetryAppliesOnce() {
        String account = newAccount();
        String key = newKey();
        FailureLab.postgresProxy().delay(4_000);

        long start = System.nanoTime();
        Response slow = postTransaction(account, key, transaction("CREDIT", 40, 1));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertUnavailable(slow);
        assertTrue(millis < RedisFailureTest.BOUND_MILLIS, "took " + millis + " ms");
        // it may commit late (below), so the answer must not say nothing was applied
        assertTrue(slow.<String>path("detail").contains("may or may not have been applied"), slow.asString());
        assertFalse(slow.<String>path("detail").contains("nothing was applied"), slow.asString());

        // The statement still reaches Postgres late and commits: the retry must replay it, not apply again.
        FailureLab.postgresProxy().heal();
        Response[] last = new Response[1];
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            last[0] = postTransaction(account, key, transaction("CREDIT", 40, 1));
            return last[0].statusCode() == 201;
        });
        assertEquals(40, balance(account));
        assertEquals(1, entryCount(account));
    }
}
