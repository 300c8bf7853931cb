package dev.ledger.failure;

import dev.ledger.Storm;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import dev.ledger.idempotency.RedisScripts;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import java.net.URL;
import java.time.Duration;
import java.util.Collections;
import java.util.List;

import static dev.ledger.LedgerApi.balance;
import static dev.ledger.LedgerApi.entryCount;
import static dev.ledger.LedgerApi.newAccount;
import static dev.ledger.LedgerApi.newKey;
import static dev.ledger.LedgerApi.postTransaction;
import static dev.ledger.LedgerApi.transaction;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Redis down, slow, flushed of its scripts or restarted: POSTs go on, at most once per key. */
@QuarkusTest
@EnabledIfEnvironmentVariable(named = "QUARKUS_DATASOURCE_REACTIVE_URL", matches = ".+",
        disabledReason = "the failure lab proxies local servers (pom profile local-services); Dev Services run here")
@TestProfile(FailureLabProfile.class)
class RedisFailureTest {
    /** A POST's bound (about 2 s) plus slack for a noisy shared machine. */
    static final long BOUND_MILLIS = 3_500;

    @Inject
    RedisScripts scripts;

    @Inject
    RedisDataSource redis;

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    @AfterEach
    void healthyDependencies() {
        FailureLab.healAll();
        scripts.breaker().reset();
        // the lab's own Redis: keys left by earlier tests must not pass for this test's work
        redis.flushall();
    }

    private int redisKeys() {
        return redis.key().keys("idem:*").size();
    }

    @Test
    void postsThroughPostgresWhileRedisIsDown() {
        String account = newAccount();
        String key = newKey();
        FailureLab.redisProxy().cut();

        Response first = postTransaction(account, key, transaction("CREDIT", 250, 1));
        assertEquals(201, first.statusCode(), first.asString());
        assertNull(first.header("Idempotent-Replayed"));
        Response retry = postTransaction(account, key, transaction("CREDIT", 250, 1));
        assertEquals(201, retry.statusCode());
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(first.asString(), retry.asString());
        assertEquals(422, postTransaction(account, key, transaction("CREDIT", 251, 1)).statusCode());

        assertEquals(250, balance(account)); // GETs never need Redis
        given().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks.data.redis", hasItem("DOWN"));
    }

    @Test
    void concurrentDuplicatesGetTheReplayWhileRedisIsDown() throws Exception {
        String account = newAccount();
        FailureLab.redisProxy().cut();
        String key = newKey();
        List<Storm.Answer> answers = Storm.post(base, "/accounts/" + account + "/transactions",
                Collections.nCopies(30, new String[]{key, transaction("CREDIT", 99, 1)}));
        long fresh = answers.stream().filter(a -> a.status() == 201 && a.replayed() == null).count();
        assertEquals(1, fresh);
        for (Storm.Answer answer : answers) {
            // without Redis nobody answers 409 in-progress: duplicates wait on the record and replay
            assertEquals(201, answer.status(), answer.body());
            assertEquals(answers.get(0).json().get("id"), answer.json().get("id"));
        }
        assertEquals(99, balance(account));
        assertEquals(1, entryCount(account));
    }

    @Test
    void slowRedisCostsItsTimeoutNotTheRequest() {
        String account = newAccount();
        FailureLab.redisProxy().delay(5_000);
        long start = System.nanoTime();
        Response response = postTransaction(account, newKey(), transaction("CREDIT", 10, 1));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(201, response.statusCode(), response.asString());
        assertTrue(millis < BOUND_MILLIS, "took " + millis + " ms");
        assertEquals(10, balance(account));
    }

    @Test
    void theFastPathResumesWhenRedisReturns() {
        String account = newAccount();
        FailureLab.redisProxy().cut();
        for (int i = 1; i <= 12; i++) { // enough failures to open the breaker
            assertEquals(201, postTransaction(account, newKey(), transaction("CREDIT", 1, i)).statusCode());
        }
        FailureLab.redisProxy().heal();
        String key = newKey();
        long[] sequence = {100};
        await().atMost(Duration.ofSeconds(20)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100)).until(() -> {
            String probe = newKey();
            postTransaction(account, probe, transaction("CREDIT", 1, ++sequence[0]));
            // a probe went through Redis and the breaker closed behind it
            return redisKeys() > 0 && scripts.breaker().getState() == CircuitBreaker.State.CLOSED;
        });
        Response first = postTransaction(account, key, transaction("CREDIT", 5, 1_000));
        assertEquals(201, first.statusCode());
        // Served by Redis alone: Postgres can be gone and the replay still answers.
        FailureLab.postgresProxy().cut();
        Response replay = postTransaction(account, key, transaction("CREDIT", 5, 1_000));
        assertEquals(201, replay.statusCode(), replay.asString());
        assertEquals("true", replay.header("Idempotent-Replayed"));
        assertEquals(first.asString(), replay.asString());
    }

    @Test
    void losingTheScriptCacheCostsOnlyAReload() throws Exception {
        String account = newAccount();
        assertEquals(201, postTransaction(account, newKey(), transaction("CREDIT", 1, 1)).statusCode());
        redis.execute("SCRIPT", "FLUSH"); // the tests' own Redis server
        String key = newKey();
        Response afterFlush = postTransaction(account, key, transaction("CREDIT", 1, 2));
        assertEquals(201, afterFlush.statusCode());
        assertTrue(redisKeys() > 0, "the fast path recorded the key");

        FailureLab.redis().restart(); // a restart loses keys and scripts
        Response replay = postTransaction(account, key, transaction("CREDIT", 1, 2));
        assertEquals("true", replay.header("Idempotent-Replayed")); // from Postgres
        assertEquals(afterFlush.asString(), replay.asString());
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
            postTransaction(account, key, transaction("CREDIT", 1, 2));
            return redisKeys() > 0; // refilled through reloaded scripts
        });
        assertEquals(2, balance(account));
    }
}
