package dev.ledger.failure;

import dev.ledger.dependency.Breakers;
import dev.ledger.testing.AccountLock;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.FailureLab;
import dev.ledger.testing.FailureLabProfile;
import dev.ledger.testing.FastPathStore;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.Outcomes;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.TcpProxy;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

import java.net.URL;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ledger.testing.LedgerApi.EXPIRES;
import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.entryCount;
import static dev.ledger.testing.LedgerApi.keyExpiry;
import static dev.ledger.testing.LedgerApi.lookup;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis down, slow, flushed of its scripts or restarted: POSTs go on, at most once per key. The same tests
 * run with DynamoDB as the store ({@link DynamoDbFailureTest}), through {@link #store()} and {@link #storeProxy()}.
 */
@QuarkusTest
@EnabledIfEnvironmentVariable(named = "QUARKUS_DATASOURCE_REACTIVE_URL", matches = ".+",
        disabledReason = "the failure lab proxies local servers (pom profile local-services); Dev Services run here")
@TestProfile(FailureLabProfile.class)
class RedisFailureTest {
    /** A POST's bound (about 2 s) plus slack for a noisy shared machine. */
    static final long BOUND_MILLIS = 3_500;

    @Inject
    Breakers breakers;

    @Inject
    RedisDataSource redis;

    @TestHTTPResource("/")
    URL base;

    /** The store under test. */
    FastPathStore store() {
        return FastPathStore.redis(redis);
    }

    /** The proxy in front of the store's server. */
    TcpProxy storeProxy() {
        return FailureLab.redisProxy();
    }

    /** The store's call timeout in the test profile ({@code ledger.fast-path.timeout}). */
    long storeTimeoutMillis() {
        return 300;
    }

    private CircuitBreaker breaker() {
        return breakers.named(store().breaker()).orElseThrow();
    }

    @BeforeEach
    @AfterEach
    void healthyDependencies() {
        FailureLab.healAll();
        storeProxy().heal();
        // commands an earlier delay still holds back would land in this test's store
        await().atMost(Duration.ofSeconds(20)).until(() -> storeProxy().chunksHeldBack() == 0);
        breaker().reset();
        // the lab's own Redis (or table): keys left by earlier tests must not pass for this test's work
        store().flush();
    }

    /** Failed reserves of the store in /q/metrics (its dependency tag is its breaker's name). */
    private double storeReservesFailed() {
        return Metrics.value(given().get("/q/metrics").asString(), "ledger_dependency_calls_seconds_count{call=\"reserve\",dependency=\""
                + store().breaker() + "\",result=\"failed\"}").orElse(0);
    }

    private int storedKeys() {
        return store().names().size();
    }

    @Test
    void postsThroughPostgresWhileRedisIsDown() {
        String account = newAccount();
        String key = newKey();
        storeProxy().cut();
        Outcomes http = Outcomes.since("http");
        double storeFailed = storeReservesFailed();

        Response first = postTransaction(account, key, transaction("CREDIT", 250, 1));
        assertEquals(201, first.statusCode(), first.asString());
        assertNull(first.header("Idempotent-Replayed"));
        Response retry = postTransaction(account, key, transaction("CREDIT", 250, 1));
        assertEquals(201, retry.statusCode());
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(first.asString(), retry.asString());
        assertEquals(422, postTransaction(account, key, transaction("CREDIT", 251, 1)).statusCode());
        http.assertChanged(Map.of("bypassed-executed", 1.0, "bypassed-replayed", 1.0, "key-reused", 1.0));
        assertTrue(storeReservesFailed() > storeFailed, "the failed reserve is timed as failed");

        assertEquals(250, balance(account)); // GETs never need Redis
        given().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks.data." + store().readinessName(), hasItem("DOWN"));
    }

    @Test
    void looksKeysUpFromPostgresWhileTheStoreIsDown() {
        String account = newAccount();
        String before = newKey();
        Response applied = postTransaction(account, before, transaction("CREDIT", 30, 1));
        storeProxy().cut();
        String during = newKey();
        Response bypassed = postTransaction(account, during, transaction("DEBIT", 31, 2));
        assertEquals(422, bypassed.statusCode(), bypassed.asString());
        Response replayed = postTransaction(account, during, transaction("DEBIT", 31, 2));
        assertEquals("true", replayed.header("Idempotent-Replayed"));
        assertNotNull(keyExpiry(bypassed), "a recorded answer through PostgreSQL alone says when its key expires");
        assertEquals(bypassed.header(EXPIRES), replayed.header(EXPIRES));

        for (Response[] first : new Response[][]{{applied, lookup(before)}, {bypassed, lookup(during)}}) {
            Response found = first[1];
            assertEquals(200, found.statusCode(), found.asString());
            assertEquals("completed", found.path("state"));
            assertEquals(first[0].statusCode(), (int) found.path("status"));
            assertEquals(first[0].header("Location"), found.path("location"));
        }
        // with the store away, a key with no record is unknown (docs/api.md, "Decisions where the contract is silent")
        Response unknown = lookup(newKey());
        assertEquals(404, unknown.statusCode(), unknown.asString());
        assertEquals("/problems/idempotency-key-not-found", unknown.path("type"));
        System.out.printf("[lookup-store-down] lookups 3: completed 2 (201 and 422, from PostgreSQL), unknown 1 (404)%n");
    }

    @Test
    void concurrentDuplicatesGetTheReplayWhileRedisIsDown() throws Exception {
        String account = newAccount();
        storeProxy().cut();
        String key = newKey();
        List<PaymentLoad.Answer> answers = new PaymentLoad("duplicates", ApiClient.DEV, List.of(base.toURI()))
                .burst("/accounts/" + account + "/transactions", Collections.nCopies(30, new String[]{key, transaction("CREDIT", 99, 1)}));
        long fresh = answers.stream().filter(a -> a.status() == 201 && a.replayed() == null).count();
        assertEquals(1, fresh);
        for (PaymentLoad.Answer answer : answers) {
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
        storeProxy().delay(5_000);
        long start = System.nanoTime();
        Response response = postTransaction(account, newKey(), transaction("CREDIT", 10, 1));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(201, response.statusCode(), response.asString());
        // the reserve's and the complete's timeouts, over Redis' 300 ms each
        long bound = BOUND_MILLIS + 2 * (storeTimeoutMillis() - 300);
        assertTrue(millis < bound, "took " + millis + " ms, bound " + bound);
        assertEquals(10, balance(account));
    }

    @Test
    void theFastPathResumesWhenRedisReturns() {
        String account = newAccount();
        storeProxy().cut();
        for (int i = 1; i <= 12; i++) { // enough failures to open the breaker
            assertEquals(201, postTransaction(account, newKey(), transaction("CREDIT", 1, i)).statusCode());
        }
        storeProxy().heal();
        String key = newKey();
        long[] sequence = {100};
        await().atMost(Duration.ofSeconds(20)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100)).until(() -> {
            String probe = newKey();
            postTransaction(account, probe, transaction("CREDIT", 1, ++sequence[0]));
            // a probe went through Redis and the breaker closed behind it
            return storedKeys() > 0 && breaker().getState() == CircuitBreaker.State.CLOSED;
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
        assertTrue(storedKeys() > 0, "the fast path recorded the key");

        FailureLab.redis().restart(); // a restart loses keys and scripts
        Response replay = postTransaction(account, key, transaction("CREDIT", 1, 2));
        assertEquals("true", replay.header("Idempotent-Replayed")); // from Postgres
        assertEquals(afterFlush.asString(), replay.asString());
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> {
            postTransaction(account, key, transaction("CREDIT", 1, 2));
            return storedKeys() > 0; // refilled through reloaded scripts
        });
        assertEquals(2, balance(account));
    }

    /*
     * The breaker opening while a request holds its key (others' calls failed meanwhile, as under a
     * storm on a loaded machine) must not leave the key held: the request's complete or release is
     * still sent, or every retry of a request that has its answer gets 409 request-in-progress until
     * the lease ends (30 s). The breaker is forced open at the moment that matters, then closed again
     * (Redis answering) before the retry.
     */

    @Test
    void aKeyHeldWhenTheBreakerOpensIsStillCompleted() throws Exception {
        String account = newAccount();
        String key = newKey();
        String body = transaction("CREDIT", 40, 1);
        Response first = openTheBreakerWhileThePostWaitsInPostgres(account, key, body, false);
        assertEquals(201, first.statusCode(), first.asString());

        breaker().reset();
        assertTheRetryReplays(account, key, body, first);
    }

    @Test
    void aKeyHeldWhenTheBreakerOpensIsReleasedWhenTheRequestFails() throws Exception {
        String account = newAccount();
        String key = newKey();
        String body = transaction("CREDIT", 41, 1);
        Response failed = openTheBreakerWhileThePostWaitsInPostgres(account, key, body, true);
        assertEquals(503, failed.statusCode(), failed.asString());

        breaker().reset();
        Response retry = postTransaction(account, key, body);
        printCounts("released", failed, retry, account);
        assertEquals(201, retry.statusCode(), "the key was given back, so the retry executes: " + retry.asString());
        assertNull(retry.header("Idempotent-Replayed"));
        assertEquals(41, balance(account));
        assertEquals(1, entryCount(account));
    }

    @Test
    void aReserveThatLandsAfterItsTimeoutIsFencedThroughAnOpenBreaker() throws Exception {
        String account = newAccount(); // also leaves a pooled connection to Redis open
        String key = newKey();
        String body = transaction("CREDIT", 42, 1);
        storeProxy().delay(storeTimeoutMillis() + 700); // past the timeout: the reserve is sent, and lands late
        long mark = storeProxy().chunksFromClients();
        CompletableFuture<Response> original = CompletableFuture.supplyAsync(() -> postTransaction(account, key, body));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> storeProxy().chunksFromClients() > mark);
        breaker().transitionToForcedOpenState();
        Response first = original.get(30, TimeUnit.SECONDS);
        assertEquals(201, first.statusCode(), first.asString()); // through Postgres alone

        storeProxy().heal();
        // the late reserve and whatever followed it have reached Redis
        await().atMost(Duration.ofSeconds(20)).until(() -> storeProxy().chunksHeldBack() == 0);
        breaker().reset();
        assertTheRetryReplays(account, key, body, first);
    }

    /**
     * Posts, and once the request has reserved its key in Redis and waits in Postgres (for a row lock
     * of the test's), forces the breaker open; then lets the statement go on, or cancels it. Answers
     * the request's answer.
     */
    private Response openTheBreakerWhileThePostWaitsInPostgres(String account, String key, String body, boolean cancel)
            throws Exception {
        CompletableFuture<Response> original;
        try (AccountLock lock = AccountLock.hold(account)) {
            original = CompletableFuture.supplyAsync(() -> postTransaction(account, key, body));
            await().atMost(Duration.ofSeconds(10)).until(() -> lock.waiters() == 1);
            breaker().transitionToForcedOpenState();
            if (cancel) {
                assertEquals(1, lock.cancelWaiters(), "the original's statement, cancelled in Postgres");
            }
        }
        return original.get(30, TimeUnit.SECONDS);
    }

    private void assertTheRetryReplays(String account, String key, String body, Response first) {
        Response retry = postTransaction(account, key, body);
        printCounts("completed", first, retry, account);
        assertEquals(201, retry.statusCode(), "a retry of a request answered 201 replays it: " + retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(first.asString(), retry.asString());
        // no key of this test is left held (the account's open and this payment)
        assertEquals(List.of("COMPLETED", "COMPLETED"), store().states());
        assertEquals(1, entryCount(account));
    }

    /** The counts of a test where the breaker opened mid-request: 2 requests, the original and its retry. */
    private static void printCounts(String settled, Response original, Response retry, String account) {
        long entries = entryCount(account);
        System.out.printf("[breaker-open-mid-request, %s] requests sent 2, applied %d, double applications %d, "
                        + "answers: original %d, retry %d%s%n", settled, entries, Math.max(0, entries - 1),
                original.statusCode(), retry.statusCode(), "true".equals(retry.header("Idempotent-Replayed")) ? " (replayed)" : "");
    }
}
