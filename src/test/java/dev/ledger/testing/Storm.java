package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Sends many POSTs (as the client {@link ApiClient#DEV} unless told) at the same moment (a start gate, no sleeps) and collects every answer. */
public final class Storm {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private Storm() {
    }

    public record Answer(int status, String body, String replayed, String retryAfter) {
        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        public String type() {
            return json().path("type").asText();
        }
    }

    /**
     * The promise of a storm of one key: exactly one original 201; every other answer is that 201
     * replayed or 409 request-in-progress with a Retry-After. Answers the original's body.
     */
    public static String assertOneOriginalAndTheRestReplaysOrInProgress(List<Answer> answers) {
        List<Answer> created = answers.stream().filter(a -> a.status() == 201).toList();
        assertEquals(1, created.stream().filter(a -> a.replayed() == null).count(), "exactly one answer is the original");
        for (Answer answer : answers) {
            if (answer.status() == 201) {
                assertEquals(created.get(0).body(), answer.body(), "every 201 is the same answer");
                if (answer.replayed() != null) {
                    assertEquals("true", answer.replayed());
                }
            } else if (answer.status() == 409) {
                assertEquals("/problems/request-in-progress", answer.type());
                assertTrue(Long.parseLong(answer.retryAfter()) >= 1, "Retry-After " + answer.retryAfter());
            } else {
                fail("unexpected answer " + answer);
            }
        }
        return created.get(0).body();
    }

    /** POSTs each {key, body} to {@code path} at once and waits (bounded) for every answer. */
    public static List<Answer> post(URL base, String path, List<String[]> keysAndBodies) throws Exception {
        return post(ApiClient.DEV, base, path, keysAndBodies);
    }

    /** The same, as {@code client}. */
    public static List<Answer> post(ApiClient client, URL base, String path, List<String[]> keysAndBodies) throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Answer>> answers = new ArrayList<>();
        for (String[] keyAndBody : keysAndBodies) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(base.toString().replaceAll("/$", "") + path))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/json")
                    .header("Authorization", client.authorization())
                    .header("Idempotency-Key", keyAndBody[0])
                    .POST(HttpRequest.BodyPublishers.ofString(keyAndBody[1])).build();
            answers.add(CompletableFuture.runAsync(() -> awaitGate(gate))
                    .thenCompose(ignored -> HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString()))
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
}
