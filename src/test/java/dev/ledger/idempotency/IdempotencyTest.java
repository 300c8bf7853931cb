package dev.ledger.idempotency;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.FastPathStore;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.Outcomes;
import io.restassured.RestAssured;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Locale;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.entryCount;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static dev.ledger.testing.LedgerApi.post;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Idempotency-Key contract of every POST, against the real store and Postgres: Redis here, DynamoDB in
 * {@link DynamoDbIdempotencyTest}, the same tests through {@link #store()}.
 */
@QuarkusTest
class IdempotencyTest {
    @Inject
    RedisDataSource redis;

    /** The store under test. */
    FastPathStore store() {
        return FastPathStore.redis(redis);
    }

    /** Forgets every key, as a restart, failover or flush of the store does (the tests' own database or table). */
    private void flushStore() {
        store().flush();
    }

    @Test
    void replaysTheOriginalAnswerWithEveryHeader() {
        String account = newAccount();
        String key = newKey();
        Outcomes http = Outcomes.since("http");
        Response first = postTransaction(account, key, transaction("CREDIT", 700, 1));
        Response replay = postTransaction(account, key, "{\"sequence\":1, \"amount\":700, \"type\":\"CREDIT\"}");
        http.assertChanged(Map.of("executed", 1.0, "replayed-store", 1.0));
        assertEquals(201, replay.statusCode());
        assertEquals("true", replay.header("Idempotent-Replayed"));
        assertEquals(first.asString(), replay.asString());
        assertEquals(first.header("Location"), replay.header("Location"));
        assertEquals(first.header("Content-Type"), replay.header("Content-Type"));
        assertEquals(700, balance(account));
        assertEquals(1, entryCount(account));
    }

    @Test
    void recordsAndReplaysBusinessRefusals() {
        String account = newAccount();
        credit(account, 100, 5);
        String stale = newKey();
        String poor = newKey();
        String unknown = newKey();
        Response staleFirst = postTransaction(account, stale, transaction("CREDIT", 1, 5));
        Response poorFirst = postTransaction(account, poor, transaction("DEBIT", 1000, 6));
        Response unknownFirst = postTransaction("00000000-0000-0000-0000-00000000abcd", unknown, transaction("CREDIT", 1, 1));
        // The situation changes; the recorded answers do not.
        credit(account, 100_000, 7);
        for (Object[] pair : new Object[][]{
                {staleFirst, postTransaction(account, stale, transaction("CREDIT", 1, 5)), 409},
                {poorFirst, postTransaction(account, poor, transaction("DEBIT", 1000, 6)), 422},
                {unknownFirst, postTransaction("00000000-0000-0000-0000-00000000abcd", unknown, transaction("CREDIT", 1, 1)), 404}}) {
            Response original = (Response) pair[0];
            Response replay = (Response) pair[1];
            assertEquals(pair[2], original.statusCode());
            assertEquals(pair[2], replay.statusCode());
            assertEquals("true", replay.header("Idempotent-Replayed"));
            assertEquals("application/problem+json", replay.contentType());
            assertEquals(original.asString(), replay.asString());
        }
        assertEquals(100_100, balance(account));
    }

    @Test
    void quotedAndBareFormsAreOneKey() {
        String account = newAccount();
        String key = newKey();
        postTransaction(account, key, transaction("CREDIT", 5, 1));
        Response quoted = postTransaction(account, "\"" + key + "\"", transaction("CREDIT", 5, 1));
        assertEquals(201, quoted.statusCode());
        assertEquals("true", quoted.header("Idempotent-Replayed"));
        assertEquals(5, balance(account));
    }

    /** The fingerprint compares the resource and the request's meaning, not their spelling. */
    @Test
    void theSameAccountSpelledOtherwiseAndANullReferenceAreTheSameRequest() {
        String account = newAccount();
        String key = newKey();
        Response first = postTransaction(account, key, transaction("CREDIT", 5, 1));
        assertEquals(201, first.statusCode());
        for (Response retry : new Response[]{
                postTransaction(account.toUpperCase(Locale.ROOT), key, transaction("CREDIT", 5, 1)),
                post("/accounts/" + account + "/transactions/", key, transaction("CREDIT", 5, 1)),
                postTransaction(account, key, "{\"type\":\"CREDIT\",\"amount\":5,\"sequence\":1,\"reference\":null}")}) {
            assertEquals(201, retry.statusCode(), retry.asString());
            assertEquals("true", retry.header("Idempotent-Replayed"));
            assertEquals(first.asString(), retry.asString());
        }
        assertEquals(5, balance(account));
        assertEquals(1, entryCount(account));
    }

    @Test
    void rejectsKeyReusedWithOtherBodyOrPath() {
        String account = newAccount();
        String key = newKey();
        Outcomes http = Outcomes.since("http");
        postTransaction(account, key, transaction("CREDIT", 5, 1));
        Response otherBody = postTransaction(account, key, transaction("CREDIT", 6, 1));
        assertEquals(422, otherBody.statusCode());
        assertEquals("/problems/idempotency-key-reused", otherBody.path("type"));
        assertNull(otherBody.header("Idempotent-Replayed"));
        Response otherPath = post("/accounts", key, "{\"currency\":\"EUR\"}");
        assertEquals(422, otherPath.statusCode());
        assertEquals(5, balance(account));
        http.assertChanged(Map.of("executed", 1.0, "key-reused", 2.0));
    }

    @Test
    void answersInFlightDuplicatesWithRetryAfter() throws Exception {
        String key = newKey();
        String body = "{\"currency\":\"CHF\"}";
        // Hold the key as an in-flight request would, through the same scope and fingerprint.
        IdempotentRequest inFlight = IdempotentRequest.of(ApiClient.DEV.id(), new IdempotencyKey(key), "POST",
                "/accounts", new ObjectMapper().readTree(body));
        store().holdInFlight(inFlight.keyId(), inFlight.fingerprint().hex(), "someone-else", 20_000);
        Outcomes http = Outcomes.since("http");

        Response duplicate = post("/accounts", key, body);
        assertEquals(409, duplicate.statusCode());
        assertEquals("/problems/request-in-progress", duplicate.path("type"));
        long retryAfter = Long.parseLong(duplicate.header("Retry-After"));
        assertTrue(retryAfter >= 1 && retryAfter <= 20, "Retry-After " + retryAfter);

        Response otherRequest = post("/accounts", key, "{\"currency\":\"EUR\"}");
        assertEquals(422, otherRequest.statusCode());

        // Not recorded: once the holder lets go (crash, release), the key executes afresh.
        store().forget(inFlight.keyId());
        Response afterwards = post("/accounts", key, body);
        assertEquals(201, afterwards.statusCode());
        assertNull(afterwards.header("Idempotent-Replayed"));
        http.assertChanged(Map.of("in-flight", 1.0, "key-reused", 1.0, "executed", 1.0));
    }

    @Test
    void replaysFromPostgresWhenTheStoreForgot() {
        String account = newAccount();
        String applied = newKey();
        String refused = newKey();
        String openKey = newKey();
        Response appliedFirst = postTransaction(account, applied, transaction("CREDIT", 300, 1));
        Response refusedFirst = postTransaction(account, refused, transaction("DEBIT", 301, 2));
        Response openFirst = openAccount(openKey, "SEK");

        flushStore();
        Outcomes http = Outcomes.since("http");

        Response appliedRetry = postTransaction(account, applied, transaction("CREDIT", 300, 1));
        Response refusedRetry = postTransaction(account, refused, transaction("DEBIT", 301, 2));
        Response openRetry = openAccount(openKey, "SEK");
        for (Response[] pair : List.of(new Response[]{appliedFirst, appliedRetry}, new Response[]{refusedFirst, refusedRetry},
                new Response[]{openFirst, openRetry})) {
            assertEquals(pair[0].statusCode(), pair[1].statusCode());
            assertEquals("true", pair[1].header("Idempotent-Replayed"));
            assertEquals(pair[0].asString(), pair[1].asString());
            assertEquals(pair[0].header("Location"), pair[1].header("Location"));
            assertEquals(pair[0].contentType(), pair[1].contentType());
        }
        assertEquals(300, balance(account));
        assertEquals(1, entryCount(account));

        // The replay refilled the store: the next retry is answered there, identically.
        Response again = postTransaction(account, applied, transaction("CREDIT", 300, 1));
        assertEquals(appliedFirst.asString(), again.asString());
        assertEquals("true", again.header("Idempotent-Replayed"));
        http.assertChanged(Map.of("replayed-postgres", 3.0, "replayed-store", 1.0));
    }

    /** Successful calls {@code call} of the store in /q/metrics (its dependency tag is its breaker's name). */
    private double storeCalls(String metrics, String call) {
        return Metrics.value(metrics, "ledger_dependency_calls_seconds_count{call=\"" + call + "\",dependency=\""
                + store().breaker() + "\",result=\"ok\"}").orElse(0);
    }

    @Test
    void timesEachStoreCallAndPostgresStatement() {
        String metrics = RestAssured.get("/q/metrics").asString();
        double reserves = storeCalls(metrics, "reserve");
        double completes = storeCalls(metrics, "complete");
        double statements = Metrics.value(metrics, "ledger_dependency_calls_seconds_count{call=\"statement\",dependency=\"postgres\",result=\"ok\"}").orElse(0);
        newAccount();
        metrics = RestAssured.get("/q/metrics").asString();
        assertEquals(reserves + 1, storeCalls(metrics, "reserve"));
        assertEquals(completes + 1, storeCalls(metrics, "complete"));
        // at least: where events are on (the DynamoDB profile), the relay's statements are timed there too
        double statementsAfter = Metrics.value(metrics, "ledger_dependency_calls_seconds_count{call=\"statement\",dependency=\"postgres\",result=\"ok\"}").orElse(0);
        assertTrue(statementsAfter >= statements + 1, statements + " statements, then " + statementsAfter);
        assertTrue(metrics.contains("ledger_idempotency_requests_seconds_bucket{outcome=\"executed\",transport=\"http\",le=\"0.005\"}"),
                "a latency histogram per outcome");
    }

    @Test
    void detectsKeyReuseFromPostgresWhenTheStoreForgot() {
        String account = newAccount();
        String key = newKey();
        postTransaction(account, key, transaction("CREDIT", 300, 1));
        flushStore();
        Response reuse = postTransaction(account, key, transaction("CREDIT", 999, 2));
        assertEquals(422, reuse.statusCode());
        assertEquals("/problems/idempotency-key-reused", reuse.path("type"));
        assertEquals(300, balance(account));
        // and the original request still replays
        Response original = postTransaction(account, key, transaction("CREDIT", 300, 1));
        assertEquals(201, original.statusCode());
        assertEquals("true", original.header("Idempotent-Replayed"));
    }

    @Test
    void keysAreNotStoredRaw() {
        String key = "raw-key-" + newKey();
        openAccount(key, "EUR");
        List<String> stored = store().names();
        assertTrue(stored.stream().noneMatch(k -> k.contains(key)), "raw key found in the store");
        assertTrue(stored.stream().allMatch(store()::isKeyId), stored.toString());
    }
}
