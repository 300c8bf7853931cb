package dev.ledger.idempotency;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.Sql;
import dev.ledger.testing.AccountLock;
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

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ledger.testing.LedgerApi.EXPIRES;
import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.entryCount;
import static dev.ledger.testing.LedgerApi.keyExpiry;
import static dev.ledger.testing.LedgerApi.lookup;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static dev.ledger.testing.LedgerApi.post;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.postTransactionAsync;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Idempotency-Key contract of every POST, against the real store and Postgres: Redis here, DynamoDB in
 * {@link DynamoDbIdempotencyTest}, the same tests through {@link #store()}.
 */
@QuarkusTest
class IdempotencyTest {
    private static final Duration RETENTION = Duration.ofHours(24);
    private static final Duration LEASE = Duration.ofSeconds(30);

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
        assertKeptForTheRetention(first);
        assertEquals(first.header(EXPIRES), replay.header(EXPIRES));
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
            assertKeptForTheRetention(original);
            assertEquals(original.header(EXPIRES), replay.header(EXPIRES));
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
        assertNull(otherBody.header(EXPIRES), "an answer nothing was recorded for says no expiry");
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
        assertNull(duplicate.header(EXPIRES), "an answer nothing was recorded for says no expiry");

        Response otherRequest = post("/accounts", key, "{\"currency\":\"EUR\"}");
        assertEquals(422, otherRequest.statusCode());
        assertNull(otherRequest.header(EXPIRES));

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
            assertKeptForTheRetention(pair[0]);
            assertEquals(pair[0].header(EXPIRES), pair[1].header(EXPIRES), "the record's expiry, as the first answer said it");
        }
        assertEquals(300, balance(account));
        assertEquals(1, entryCount(account));

        // The replay refilled the store: the next retry is answered there, identically.
        Response again = postTransaction(account, applied, transaction("CREDIT", 300, 1));
        assertEquals(appliedFirst.asString(), again.asString());
        assertEquals("true", again.header("Idempotent-Replayed"));
        assertEquals(appliedFirst.header(EXPIRES), again.header(EXPIRES), "the store refilled with the record's expiry");
        http.assertChanged(Map.of("replayed-postgres", 3.0, "replayed-store", 1.0));
    }

    /** Successful calls {@code call} of the store in /q/metrics (its dependency tag is its breaker's name). */
    private double storeCalls(String metrics, String call) {
        // with shards, every series of the name also has a shard label (empty for the store's)
        return Metrics.sum(metrics, "ledger_dependency_calls_seconds_count{call=\"" + call + "\",dependency=\""
                + store().breaker() + "\",result=\"ok\"}");
    }

    @Test
    void timesEachStoreCallAndPostgresStatement() {
        String metrics = RestAssured.get("/q/metrics").asString();
        double reserves = storeCalls(metrics, "reserve");
        double completes = storeCalls(metrics, "complete");
        double statements = Metrics.sum(metrics, "ledger_dependency_calls_seconds_count{call=\"statement\",dependency=\"postgres\",result=\"ok\"}");
        newAccount();
        metrics = RestAssured.get("/q/metrics").asString();
        assertEquals(reserves + 1, storeCalls(metrics, "reserve"));
        assertEquals(completes + 1, storeCalls(metrics, "complete"));
        // at least: where events are on (the DynamoDB profile), the relay's statements are timed there too
        double statementsAfter = Metrics.sum(metrics, "ledger_dependency_calls_seconds_count{call=\"statement\",dependency=\"postgres\",result=\"ok\"}");
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

    /** The first answer's {@code Idempotency-Expires}: the retention from about now (to the second, as an HTTP date). */
    private static void assertKeptForTheRetention(Response first) {
        Instant expires = keyExpiry(first);
        assertNotNull(expires, "no " + EXPIRES + " on a recorded answer");
        Instant expected = Instant.now().plus(RETENTION);
        assertTrue(expires.isAfter(expected.minusSeconds(60)) && !expires.isAfter(expected),
                EXPIRES + " " + expires + ", retention from now " + expected);
    }

    @Test
    void looksUpCompletedKeysWithTheirRecordedAnswer() {
        Instant start = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        String account = newAccount();
        String applied = newKey();
        String refused = newKey();
        String opened = newKey();
        String payments = "/accounts/" + account + "/transactions";
        Map<String, Response> firsts = Map.of(
                applied, postTransaction(account, applied, transaction("CREDIT", 40, 1)),
                refused, postTransaction(account, refused, transaction("DEBIT", 41, 2)),
                opened, openAccount(opened, "NOK"));
        Map<String, String> paths = Map.of(applied, payments, refused, payments, opened, "/accounts");
        assertEquals(422, firsts.get(refused).statusCode());
        for (boolean forgotten : new boolean[]{false, true}) {
            if (forgotten) {
                flushStore(); // the lookup reads the durable record, whatever the store holds
            }
            firsts.forEach((key, first) -> {
                Response found = lookup(key);
                assertEquals(200, found.statusCode(), found.asString());
                assertEquals(key, found.path("key"));
                assertEquals("completed", found.path("state"));
                assertEquals("POST", found.path("method"));
                assertEquals(paths.get(key), found.path("path"));
                assertEquals(first.statusCode(), (int) found.path("status"));
                assertEquals(first.header("Location"), found.path("location"), "the recorded Location, or null");
                Instant created = Instant.parse(found.path("createdAt"));
                assertTrue(!created.isBefore(start) && !created.isAfter(Instant.now()), "createdAt " + created);
                assertEquals(keyExpiry(first), Instant.parse(found.<String>path("expiresAt")).truncatedTo(ChronoUnit.SECONDS),
                        "expiresAt is what Idempotency-Expires said");
            });
        }
    }

    @Test
    void looksUpAKeyInFlightWithItsLeasesEnd() throws Exception {
        String account = newAccount();
        String key = newKey();
        CompletableFuture<HttpResponse<String>> original;
        Instant asked;
        Response held;
        try (AccountLock lock = AccountLock.hold(account)) {
            original = postTransactionAsync(account, key, transaction("CREDIT", 7, 1), null);
            // reserved in the store, then blocked on the account's row: in flight, with nothing committed
            await().atMost(Duration.ofSeconds(20)).until(() -> lock.waiters() == 1);
            asked = Instant.now();
            held = lookup(key);
        }
        assertEquals(200, held.statusCode(), held.asString());
        assertEquals("in-flight", held.path("state"));
        assertEquals("POST", held.path("method"));
        assertEquals("/accounts/" + account + "/transactions", held.path("path"));
        assertNull(held.path("status"));
        assertNull(held.path("location"));
        Instant leaseEnd = Instant.parse(held.path("expiresAt"));
        assertTrue(leaseEnd.isAfter(asked) && !leaseEnd.isAfter(asked.plus(LEASE)), "the lease's end " + leaseEnd + ", asked at " + asked);
        assertTrue(!Instant.parse(held.<String>path("createdAt")).isAfter(asked), "reserved before it was looked up");

        HttpResponse<String> done = original.get(30, TimeUnit.SECONDS);
        assertEquals(201, done.statusCode(), done.body());
        Response completed = lookup(key);
        assertEquals("completed", completed.path("state"));
        assertEquals(201, (int) completed.path("status"));
        assertEquals(done.headers().firstValue("Location").orElseThrow(), completed.path("location"));
    }

    @Test
    void anExpiredKeyIsNotFound() throws Exception {
        String key = newKey();
        Response opened = openAccount(key, "DKK");
        assertEquals(200, lookup(key).statusCode());
        try (Connection db = Sql.connectFor(ApiClient.DEV.id());
             PreparedStatement expire = db.prepareStatement(
                     "UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE resource_id = ?")) {
            expire.setObject(1, UUID.fromString(opened.path("id")));
            assertEquals(1, expire.executeUpdate());
        }
        // not purged yet, and still in the store: expired all the same
        Response expired = lookup(key);
        assertEquals(404, expired.statusCode(), expired.asString());
        assertEquals("/problems/idempotency-key-not-found", expired.path("type"));
        assertEquals(lookup(newKey()).asString(), expired.asString(), "the same answer as a key never used");
    }

    @Test
    void looksUpAKeyOfEveryVisibleCharacterAndRefusesMalformedOnes() {
        // '/', '?', '#', '%' and '+' mean something in a URL: percent-encoded, they are the key's own characters
        String key = "k/?#%+&;=:@!$'()*,[]{}|\\^`~<>" + UUID.randomUUID();
        assertEquals(201, openAccount(key, "ISK").statusCode());
        Response found = lookup(key);
        assertEquals(200, found.statusCode(), found.asString());
        assertEquals(key, found.path("key"));

        for (String malformed : new String[]{"%22abc%22", "a%20b", "%C3%A9", "x".repeat(256)}) {
            Response refused = ApiClient.DEV.lookupPath(malformed);
            assertEquals(400, refused.statusCode(), malformed + ": " + refused.asString());
            assertEquals("/problems/idempotency-key-invalid", refused.path("type"), malformed);
        }
        Response unknown = lookup(newKey());
        assertEquals(404, unknown.statusCode());
        assertEquals("/problems/idempotency-key-not-found", unknown.path("type"));
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
