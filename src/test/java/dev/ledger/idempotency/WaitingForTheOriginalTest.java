package dev.ledger.idempotency;

import dev.ledger.testing.AccountLock;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.LedgerApi;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.Outcomes;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ledger.testing.LedgerApi.transaction;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code Prefer: wait=N} (API.md "Waiting for an in-flight original"): a duplicate of an in-flight
 * request waits for the original's recorded answer instead of answering 409. The original is held
 * in flight by a row lock on its account ({@link AccountLock}), so it is slow exactly as long as
 * the test wants; the database bound is raised so that it does not time out meanwhile.
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class WaitingForTheOriginalTest {

    @Test
    void fiftyWaitingDuplicatesGetTheSlowOriginalsAnswerAndApplyNothing() throws Exception {
        String account = LedgerApi.newAccount();
        LedgerApi.credit(account, 1000, 1);
        String key = LedgerApi.newKey();
        String body = transaction("CREDIT", 500, 2);
        double byMessageBefore = metric("ledger_idempotency_wakeups_total{by=\"message\"}");
        Outcomes http = Outcomes.since("http");

        CompletableFuture<HttpResponse<String>> original;
        List<CompletableFuture<HttpResponse<String>>> duplicates = new ArrayList<>();
        try (AccountLock lock = AccountLock.hold(account)) {
            original = LedgerApi.postTransactionAsync(account, key, body, null);
            await().atMost(Duration.ofSeconds(10)).until(() -> lock.waiters() == 1);
            for (int i = 0; i < 50; i++) {
                duplicates.add(LedgerApi.postTransactionAsync(account, key, body, "wait=8"));
            }
            await().atMost(Duration.ofSeconds(6)).until(() -> metric("ledger_idempotency_waiting") == 50);
        }

        HttpResponse<String> first = original.get(30, TimeUnit.SECONDS);
        assertEquals(201, first.statusCode(), first.body());
        assertNull(first.headers().firstValue("Idempotent-Replayed").orElse(null));
        int replays = 0;
        for (CompletableFuture<HttpResponse<String>> duplicate : duplicates) {
            HttpResponse<String> answer = duplicate.get(30, TimeUnit.SECONDS);
            assertEquals(201, answer.statusCode(), answer.body());
            assertEquals(first.body(), answer.body());
            assertEquals("true", answer.headers().firstValue("Idempotent-Replayed").orElse(null));
            assertEquals("wait=8", answer.headers().firstValue("Preference-Applied").orElse(null));
            replays++;
        }
        int entries = LedgerApi.entryCount(account);
        double byMessage = metric("ledger_idempotency_wakeups_total{by=\"message\"}") - byMessageBefore;
        System.out.printf("Prefer: wait storm: 1 original + %d waiting duplicates, %d replays, %d woken by the settled "
                + "message, applied %d, double applications %d%n", duplicates.size(), replays, (int) byMessage,
                entries - 1, entries - 2);
        assertEquals(2, entries, "the credit of 1000 and this one, once");
        assertEquals(1500, LedgerApi.balance(account));
        assertEquals(50, (int) byMessage, "every waiter woken by the original's completion, not by polling");
        assertEquals(0, metric("ledger_idempotency_waiting"));
        http.assertChanged(Map.of("executed", 1.0, "waited-replayed", 50.0));
    }

    @Test
    void aWaiterWhoseOriginalFailsExecutesItOnce() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = transaction("CREDIT", 700, 1);
        Outcomes http = Outcomes.since("http");

        CompletableFuture<HttpResponse<String>> original;
        CompletableFuture<HttpResponse<String>> waiter;
        try (AccountLock lock = AccountLock.hold(account)) {
            original = LedgerApi.postTransactionAsync(account, key, body, null);
            await().atMost(Duration.ofSeconds(10)).until(() -> lock.waiters() == 1);
            waiter = LedgerApi.postTransactionAsync(account, key, body, "wait=8");
            await().atMost(Duration.ofSeconds(6)).until(() -> metric("ledger_idempotency_waiting") == 1);

            assertEquals(1, lock.cancelWaiters(), "the original's statement, cancelled in Postgres");
            HttpResponse<String> failed = original.get(30, TimeUnit.SECONDS);
            assertEquals(503, failed.statusCode(), failed.body());
            // the waiter took the key it gave back, and now waits for the same lock
            await().atMost(Duration.ofSeconds(10)).until(() -> lock.waiters() == 1);
        }

        HttpResponse<String> answer = waiter.get(30, TimeUnit.SECONDS);
        assertEquals(201, answer.statusCode(), answer.body());
        assertNull(answer.headers().firstValue("Idempotent-Replayed").orElse(null), "its own execution, not a replay");
        assertEquals("wait=8", answer.headers().firstValue("Preference-Applied").orElse(null));
        assertEquals(1, LedgerApi.entryCount(account));
        assertEquals(700, LedgerApi.balance(account));
        // a retry of either now replays that one answer
        HttpResponse<String> retry = LedgerApi.postTransactionAsync(account, key, body, null).get(30, TimeUnit.SECONDS);
        assertEquals(answer.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        http.assertChanged(Map.of("released", 1.0, "waited-executed", 1.0, "replayed-store", 1.0));
    }

    @Test
    void aWaitIsCappedByMaxWaitAndThenAnswersAsWithoutThePreference() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = transaction("CREDIT", 300, 1);
        Outcomes http = Outcomes.since("http");

        CompletableFuture<HttpResponse<String>> original;
        try (AccountLock lock = AccountLock.hold(account)) {
            original = LedgerApi.postTransactionAsync(account, key, body, null);
            await().atMost(Duration.ofSeconds(10)).until(() -> lock.waiters() == 1);
            // asks for ten minutes; the client gives up after 30 s, so only the cap (8 s) can answer it
            HttpResponse<String> capped = LedgerApi.postTransactionAsync(account, key, body, "wait=600").get(30, TimeUnit.SECONDS);
            assertEquals(409, capped.statusCode(), capped.body());
            assertTrue(capped.body().contains("/problems/request-in-progress"), capped.body());
            assertTrue(Long.parseLong(capped.headers().firstValue("Retry-After").orElseThrow()) >= 1);
            assertFalse(capped.headers().firstValue("Preference-Applied").isPresent());
        }
        assertEquals(201, original.get(30, TimeUnit.SECONDS).statusCode());
        assertEquals(1, LedgerApi.entryCount(account));
        http.assertChanged(Map.of("executed", 1.0, "waited-in-flight", 1.0));
    }


    /** A value of /q/metrics (0 when absent). */
    private static double metric(String name) {
        return Metrics.value(RestAssured.get("/q/metrics").asString(), name).orElse(0);
    }
}
