package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payments sent as a careful client sends them while something breaks: in waves, one new payment per
 * account per wave, each sent several times at once (duplicates, possibly through different instances),
 * and every copy retried with the same key until it has a final answer: after a 503 or a 409
 * {@code request-in-progress} (each must carry {@code Retry-After}) and, where allowed, after a
 * connection cut by a dying instance. Then {@link #reconcile()} holds the ledger against every answer
 * and replays every key.
 */
public final class PaymentStorm {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration GIVE_UP = Duration.ofSeconds(90);
    /** Replays in flight at once when reconciling: a client's pace, not a flood. */
    private static final int REPLAY_CONCURRENCY = 64;
    /** The client's back-off between retries; shorter than Retry-After, to keep the test short. */
    private static final Executor BACK_OFF = CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String name;
    private final List<URI> bases;
    private final String apiKey;
    private final int copies;
    private final boolean connectionErrorsAllowed;
    private final List<String> accounts = new ArrayList<>();
    private final Map<String, Long> sequences = new HashMap<>();
    private final Map<String, Payment> payments = new ConcurrentHashMap<>();
    private final Map<String, Answer> originals = new ConcurrentHashMap<>();
    /** Keys that got a 201 that was not a replay: each may get only one. */
    private final Set<String> applied = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicLong> answersByStatus = new ConcurrentHashMap<>();
    private final List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong sent = new AtomicLong();
    private int waves;

    /** A payment: its key, account and body never change across copies and retries. */
    public record Payment(String key, String account, long amount, String body) {
    }

    private record Answer(int status, String body, boolean replayed, String retryAfter) {
        static final Answer NONE = new Answer(-1, "", false, null);

        String type() {
            try {
                return JSON.readTree(body).path("type").asText("");
            } catch (Exception e) {
                return "";
            }
        }
    }

    /**
     * @param bases the instances (or the one balancer) to send to; copy {@code i} of a payment goes to {@code bases[i % n]}
     * @param connectionErrorsAllowed whether a connection cut without an answer is expected (an instance killed)
     */
    public PaymentStorm(String name, List<URI> bases, String apiKey, int copies, boolean connectionErrorsAllowed) {
        this.name = name;
        this.bases = bases;
        this.apiKey = apiKey;
        this.copies = copies;
        this.connectionErrorsAllowed = connectionErrorsAllowed;
    }

    /** Opens {@code count} accounts, each retried to its 201. */
    public void openAccounts(int count) throws Exception {
        List<CompletableFuture<Answer>> opened = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            opened.add(untilFinal(bases.get(i % bases.size()), "/accounts", name + "-open-" + UUID.randomUUID(),
                    "{\"currency\":\"EUR\"}", null));
        }
        for (CompletableFuture<Answer> answer : opened) {
            Answer account = answer.get(GIVE_UP.toSeconds(), TimeUnit.SECONDS);
            assertEquals(201, account.status(), account.body());
            accounts.add(JSON.readTree(account.body()).get("id").asText());
        }
    }

    /** Runs waves until {@code chaos} is over, then {@code after} more. Answers the number of waves run. */
    public int wavesUntil(CompletableFuture<?> chaos, int after) throws Exception {
        int run = 0;
        while (!chaos.isDone()) {
            wave();
            run++;
        }
        chaos.get();
        for (int i = 0; i < after; i++) {
            wave();
            run++;
        }
        return run;
    }

    /** One wave: a new payment per account, each sent {@code copies} times at once, each copy to its final answer. */
    public void wave() throws Exception {
        List<CompletableFuture<Answer>> all = new ArrayList<>();
        int wave = waves++;
        for (String account : accounts) {
            long sequence = sequences.merge(account, 1L, Long::sum);
            long amount = 1 + (wave * 31L + sequence * 7) % 500;
            String key = name + "-" + wave + "-" + UUID.randomUUID();
            Payment payment = new Payment(key, account, amount,
                    "{\"type\":\"CREDIT\",\"amount\":" + amount + ",\"sequence\":" + sequence + ",\"reference\":\"" + key + "\"}");
            payments.put(key, payment);
            for (int copy = 0; copy < copies; copy++) {
                all.add(untilFinal(bases.get(copy % bases.size()), path(payment), key, payment.body(), payment));
            }
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(GIVE_UP.toSeconds() + 30, TimeUnit.SECONDS);
    }

    private static String path(Payment payment) {
        return "/accounts/" + payment.account() + "/transactions";
    }

    /** One copy: sent, and sent again after every answer that is not final, until one is (or the time is up). */
    private CompletableFuture<Answer> untilFinal(URI base, String path, String key, String body, Payment payment) {
        long deadline = System.nanoTime() + GIVE_UP.toNanos();
        return attempt(base, path, key, body, payment, deadline);
    }

    private CompletableFuture<Answer> attempt(URI base, String path, String key, String body, Payment payment, long deadline) {
        return send(base, path, key, body).thenCompose(answer -> {
            if (observe(payment, answer) || System.nanoTime() > deadline) {
                return CompletableFuture.completedFuture(answer);
            }
            return CompletableFuture.supplyAsync(() -> null, BACK_OFF)
                    .thenCompose(ignored -> attempt(base, path, key, body, payment, deadline));
        });
    }

    /** The key sent once more, again after a 503 or a 409 request-in-progress: its first other answer. */
    private CompletableFuture<Answer> replay(URI base, Payment payment, long deadline) {
        return send(base, path(payment), payment.key(), payment.body()).thenCompose(answer -> {
            boolean transient_ = answer.status() == 503 || answer.status() == -1
                    || (answer.status() == 409 && answer.type().equals("/problems/request-in-progress"));
            if (!transient_ || System.nanoTime() > deadline) {
                return CompletableFuture.completedFuture(answer);
            }
            return CompletableFuture.supplyAsync(() -> null, BACK_OFF).thenCompose(ignored -> replay(base, payment, deadline));
        });
    }

    private CompletableFuture<Answer> send(URI base, String path, String key, String body) {
        sent.incrementAndGet();
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> new Answer(r.statusCode(), r.body(),
                        "true".equals(r.headers().firstValue("Idempotent-Replayed").orElse(null)),
                        r.headers().firstValue("Retry-After").orElse(null)))
                .exceptionally(failure -> Answer.NONE);
    }

    /** Counts the answer, notes what breaks a promise, and says whether it is final for the key. */
    private boolean observe(Payment payment, Answer answer) {
        answersByStatus.computeIfAbsent(answer.status() == -1 ? "no answer" : Integer.toString(answer.status()),
                ignored -> new AtomicLong()).incrementAndGet();
        switch (answer.status()) {
            case 201 -> {
                if (payment != null) {
                    Answer original = originals.putIfAbsent(payment.key(), answer);
                    if (original != null && !original.body().equals(answer.body())) {
                        violations.add("key " + payment.key() + " answered two different 201s");
                    }
                    if (!answer.replayed() && !applied.add(payment.key())) {
                        violations.add("key " + payment.key() + " answered 201 without Idempotent-Replayed twice");
                    }
                }
                return true;
            }
            case 503 -> {
                if (answer.retryAfter() == null) {
                    violations.add("503 without Retry-After: " + answer.body());
                }
                return false;
            }
            case 409 -> {
                if (!answer.type().equals("/problems/request-in-progress") || answer.retryAfter() == null) {
                    violations.add("409 that is not request-in-progress with Retry-After: " + answer.body());
                    return true;
                }
                return false;
            }
            case -1 -> {
                if (!connectionErrorsAllowed) {
                    violations.add("a request got no answer");
                }
                return false;
            }
            default -> {
                violations.add(answer.status() + " " + answer.body());
                return true;
            }
        }
    }

    /**
     * Every key sent once more must replay its 201 byte for byte; the ledger (read through the API)
     * must hold exactly one entry per answered key and nothing else, and each balance the sum of its
     * answered credits. Prints the counts; answers the number of double applications.
     */
    public long reconcile() throws Exception {
        assertEquals(payments.size(), originals.size(), "every key ended with a 201");
        long replayFailures = 0;
        List<Payment> all = new ArrayList<>(payments.values());
        for (int from = 0; from < all.size(); from += REPLAY_CONCURRENCY) {
            List<Payment> chunk = all.subList(from, Math.min(all.size(), from + REPLAY_CONCURRENCY));
            List<CompletableFuture<Answer>> replays = new ArrayList<>();
            for (int i = 0; i < chunk.size(); i++) {
                replays.add(replay(bases.get(i % bases.size()), chunk.get(i), System.nanoTime() + GIVE_UP.toNanos()));
            }
            for (int i = 0; i < chunk.size(); i++) {
                Answer replay = replays.get(i).get(GIVE_UP.toSeconds() + 30, TimeUnit.SECONDS);
                Answer original = originals.get(chunk.get(i).key());
                if (replay.status() != 201 || !replay.replayed() || !replay.body().equals(original.body())) {
                    replayFailures++;
                }
            }
        }
        long entries = 0;
        long doubles = 0;
        Map<String, Long> expectedBalance = new HashMap<>();
        for (Payment payment : payments.values()) {
            expectedBalance.merge(payment.account(), payment.amount(), Long::sum);
        }
        for (String account : accounts) {
            Map<String, Integer> perKey = new HashMap<>();
            long after = 0;
            while (true) {
                JsonNode page = getJson(bases.get(0), "/accounts/" + account + "/transactions?limit=500&after=" + after);
                for (JsonNode entry : page.get("items")) {
                    entries++;
                    String key = entry.get("reference").asText();
                    Answer answer = originals.get(key);
                    if (perKey.merge(key, 1, Integer::sum) > 1) {
                        doubles++; // the same key applied again
                    } else if (answer == null || !JSON.readTree(answer.body()).get("id").asText().equals(entry.get("id").asText())) {
                        doubles++; // applied, but not what the client was told
                    }
                }
                if (page.get("next").isNull()) {
                    break;
                }
                after = page.get("next").asLong();
            }
            long balance = getJson(bases.get(0), "/accounts/" + account).get("balance").asLong();
            assertEquals(expectedBalance.getOrDefault(account, 0L), balance, "balance of " + account + " = its answered credits");
        }
        System.out.printf("[%s] requests sent %d, keys %d (x%d copies), waves %d, applied %d, double applications %d, "
                        + "replays failed %d, answers by status %s%n", name, sent.get(), payments.size(), copies, waves,
                entries, doubles, replayFailures, new TreeMap<>(answersByStatus));
        assertTrue(violations.isEmpty(), "broken promises: " + violations.subList(0, Math.min(10, violations.size())));
        assertEquals(payments.size(), entries, "one ledger entry per key");
        assertEquals(0, replayFailures, "every 201 replays byte for byte");
        return doubles;
    }

    /** Answers by status so far ({@code "no answer"} for a cut connection). */
    public Map<String, Long> answersByStatus() {
        Map<String, Long> counts = new TreeMap<>();
        answersByStatus.forEach((status, count) -> counts.put(status, count.get()));
        return counts;
    }

    private JsonNode getJson(URI base, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(20))
                .header("Authorization", "Bearer " + apiKey).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }
}
