package dev.ledger.transaction;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.ApiClient;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static dev.ledger.LedgerApi.balance;
import static dev.ledger.LedgerApi.credit;
import static dev.ledger.LedgerApi.entryCount;
import static dev.ledger.LedgerApi.lastSequence;
import static dev.ledger.LedgerApi.newAccount;
import static dev.ledger.LedgerApi.newKey;
import static dev.ledger.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Storms of simultaneous requests; every answer is checked, and the money adds up. */
@QuarkusTest
class ConcurrencyTest {
    private static final int STORM = 50;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/")
    URL base;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    record Answer(int status, String body, String replayed, String retryAfter) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        String type() {
            return json().path("type").asText();
        }
    }

    /** Sends every request at the same moment and waits (bounded) for every answer. */
    private List<Answer> storm(String path, List<String[]> keysAndBodies) throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Answer>> answers = new ArrayList<>();
        for (String[] keyAndBody : keysAndBodies) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(base.toString().replaceAll("/$", "") + path))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/json")
                    .header("Authorization", ApiClient.DEV.authorization())
                    .header("Idempotency-Key", keyAndBody[0])
                    .POST(HttpRequest.BodyPublishers.ofString(keyAndBody[1])).build();
            answers.add(CompletableFuture.runAsync(() -> awaitGate(gate))
                    .thenCompose(ignored -> http.sendAsync(request, HttpResponse.BodyHandlers.ofString()))
                    .thenApply(r -> new Answer(r.statusCode(), r.body(),
                            r.headers().firstValue("Idempotent-Replayed").orElse(null),
                            r.headers().firstValue("Retry-After").orElse(null))));
        }
        gate.countDown();
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        List<Answer> out = new ArrayList<>();
        for (CompletableFuture<Answer> answer : answers) {
            out.add(answer.get());
        }
        return out;
    }

    private static void awaitGate(CountDownLatch gate) {
        try {
            gate.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void appliesAConcurrentStormOfOneKeyOnce() throws Exception {
        String account = newAccount();
        String key = newKey();
        String body = transaction("CREDIT", 4242, 1);
        List<String[]> requests = Collections.nCopies(STORM, new String[]{key, body});

        List<Answer> answers = storm("/accounts/" + account + "/transactions", requests);

        List<Answer> created = answers.stream().filter(a -> a.status() == 201).toList();
        long fresh = created.stream().filter(a -> a.replayed() == null).count();
        assertEquals(1, fresh, "exactly one answer is the original");
        for (Answer answer : answers) {
            if (answer.status() == 201) {
                assertEquals(created.get(0).body(), answer.body(), "every 201 is the same answer");
                if (answer.replayed() != null) {
                    assertEquals("true", answer.replayed());
                }
            } else if (answer.status() == 409) {
                assertEquals("/problems/request-in-progress", answer.type());
                assertTrue(Long.parseLong(answer.retryAfter()) >= 1);
            } else {
                fail("unexpected answer " + answer);
            }
        }
        assertEquals(4242, balance(account));
        assertEquals(1, entryCount(account));
    }

    @Test
    void appliesDistinctKeysOnOneAccountWithoutLosingAnUpdate() throws Exception {
        String account = newAccount();
        List<String[]> requests = new ArrayList<>();
        for (int sequence = 1; sequence <= STORM; sequence++) {
            requests.add(new String[]{newKey(), transaction("CREDIT", 1000 + sequence, sequence)});
        }
        Collections.shuffle(requests);

        List<Answer> answers = storm("/accounts/" + account + "/transactions", requests);

        long appliedSum = 0;
        long highestApplied = 0;
        int applied = 0;
        for (Answer answer : answers) {
            if (answer.status() == 201) {
                applied++;
                appliedSum += answer.json().get("amount").asLong();
                highestApplied = Math.max(highestApplied, answer.json().get("sequence").asLong());
            } else {
                assertEquals(409, answer.status(), answer.body());
                assertEquals("/problems/stale-sequence", answer.type());
            }
        }
        assertTrue(applied >= 1);
        assertEquals(STORM, highestApplied, "the highest sequence can never be stale");
        assertEquals(appliedSum, balance(account));
        assertEquals(highestApplied, lastSequence(account));
        assertEquals(applied, entryCount(account));
    }

    @Test
    void racingDebitsNeverOverdraw() throws Exception {
        String account = newAccount();
        credit(account, 1000, 1);
        List<String[]> requests = new ArrayList<>();
        for (int i = 0; i < STORM; i++) {
            // increasing sequences so that most are not stale; a high base keeps them above 1
            requests.add(new String[]{newKey(), transaction("DEBIT", 100, 1_000_000 + i)});
        }

        List<Answer> answers = storm("/accounts/" + account + "/transactions", requests);

        int applied = 0;
        for (Answer answer : answers) {
            switch (answer.status()) {
                case 201 -> {
                    applied++;
                    assertTrue(answer.json().get("balanceAfter").asLong() >= 0);
                }
                case 409 -> assertEquals("/problems/stale-sequence", answer.type());
                case 422 -> assertEquals("/problems/insufficient-funds", answer.type());
                default -> fail("unexpected answer " + answer);
            }
        }
        assertTrue(applied <= 10, applied + " debits of 100 applied to a balance of 1000");
        assertEquals(1000 - 100L * applied, balance(account));
        assertTrue(balance(account) >= 0);
        assertEquals(applied + 1, entryCount(account));
    }
}
