package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Payments sent as clients send them while a test breaks something, as one client of the API, to one
 * or more instances (request {@code i} to instance {@code i mod n}), in three shapes:
 * <ul>
 *   <li>{@link #burst}: given requests all at one moment (a start gate, no sleeps), every answer collected;</li>
 *   <li>{@link #steady}: clients crediting an account of their own at a steady pace, one request at a
 *       time, the next sequence each time (gaps allowed after no answer), until {@link #stop()};</li>
 *   <li>{@link #wave()}: one new payment per account, sent {@link #copies} times at once, every copy
 *       retried with its key until it has a final answer (after a 503 or a 409 {@code request-in-progress},
 *       each of which must carry {@code Retry-After}, and after a cut connection); then {@link #reconcile()}
 *       holds the ledger against every answer and replays every key.</li>
 * </ul>
 * A test that shapes its own sends {@link #payment}s with {@link #send}. Every request but a burst's and the replays of {@link #reconcile()} is counted: {@link #sent()}, its
 * answer by status ({@link #NO_ANSWER} when none came) and its latency.
 */
public final class PaymentLoad {
    /** The status of a request that got no answer: connection refused or cut, or timed out. */
    public static final int NO_ANSWER = -1;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** A burst's requests queue behind one another. */
    private static final Duration BURST_TIMEOUT = Duration.ofSeconds(30);
    /** A steady client's patience: a slower answer counts as none. */
    private static final Duration STEADY_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration GIVE_UP = Duration.ofSeconds(90);
    /** Replays in flight at once when reconciling: a client's pace, not a flood. */
    private static final int REPLAY_CONCURRENCY = 64;
    /** The client's back-off between retries; shorter than Retry-After, to keep the tests short. */
    private static final Executor BACK_OFF = CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String name;
    private final ApiClient client;
    private final List<URI> bases;
    private int copies = 1;
    private boolean cutConnectionsExpected;
    private ScheduledExecutorService steadyClients;
    private int waves;

    private final List<String> accounts = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Long> sequences = new ConcurrentHashMap<>();
    private final Map<String, Payment> payments = new ConcurrentHashMap<>();
    private final Map<String, Answer> originals = new ConcurrentHashMap<>();
    /** Keys that got a 201 that was not a replay: each may get only one. */
    private final Set<String> applied = ConcurrentHashMap.newKeySet();
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    private final LongAdder sent = new LongAdder();
    private final Map<Integer, LongAdder> statuses = new ConcurrentHashMap<>();
    private final List<Long> latenciesMicros = Collections.synchronizedList(new ArrayList<>());
    /** The slowest answer of each status so far, in microseconds. */
    private final Map<Integer, Long> slowestMicros = new ConcurrentHashMap<>();

    /** An answer: its status, body, and headers {@code Idempotent-Replayed} and {@code Retry-After} (null when absent). */
    public record Answer(int status, String body, String replayed, String retryAfter) {
        static final Answer NONE = new Answer(NO_ANSWER, "", null, null);

        static Answer of(HttpResponse<String> response) {
            return new Answer(response.statusCode(), response.body(),
                    response.headers().firstValue("Idempotent-Replayed").orElse(null),
                    response.headers().firstValue("Retry-After").orElse(null));
        }

        /** Whether it says {@code Idempotent-Replayed: true}. */
        public boolean isReplay() {
            return "true".equals(replayed);
        }

        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        /** The problem type; empty when the body is not a problem. */
        public String type() {
            try {
                return JSON.readTree(body).path("type").asText("");
            } catch (Exception e) {
                return "";
            }
        }
    }

    /**
     * A request: its key, path and body never change across copies and retries. A payment's account and amount are
     * its own (a credit of it, for {@link #reconcile()}); another POST, {@link #request}, has neither.
     */
    public record Payment(String key, String path, String account, long amount, String body) {
    }

    /** {@code name} marks its keys and its printed counts. */
    public PaymentLoad(String name, ApiClient client, List<URI> bases) {
        this.name = name;
        this.client = client;
        this.bases = bases;
    }

    /** Each payment of a wave is sent {@code copies} times at once, copy {@code i} to instance {@code i mod n} (once unless told). */
    public PaymentLoad copies(int copies) {
        this.copies = copies;
        return this;
    }

    /** A connection cut without an answer is expected (an instance killed), not a broken promise. */
    public PaymentLoad cutConnectionsExpected() {
        this.cutConnectionsExpected = true;
        return this;
    }

    /**
     * The promise of a burst of one key: exactly one original 201; every other answer is that 201
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

    /** POSTs each {key, body} to {@code path} at one moment and waits (bounded) for every answer; fails if one gets none. */
    public List<Answer> burst(String path, List<String[]> keysAndBodies) throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<Answer>> answers = new ArrayList<>();
        for (int i = 0; i < keysAndBodies.size(); i++) {
            URI base = bases.get(i % bases.size());
            String[] keyAndBody = keysAndBodies.get(i);
            answers.add(CompletableFuture.runAsync(() -> awaitGate(gate))
                    .thenCompose(ignored -> post(base, path, keyAndBody[0], keyAndBody[1], BURST_TIMEOUT)));
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

    /** Opens {@code count} accounts, account {@code i} through instance {@code i mod n}, each retried to its 201; answers their ids. */
    public List<String> openAccounts(int count) throws Exception {
        List<CompletableFuture<Answer>> opened = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            opened.add(untilFinal(bases.get(i % bases.size()), "/accounts", name + "-open-" + UUID.randomUUID(),
                    "{\"currency\":\"EUR\"}", null));
        }
        List<String> ids = new ArrayList<>();
        for (CompletableFuture<Answer> answer : opened) {
            Answer account = answer.get(GIVE_UP.toSeconds(), TimeUnit.SECONDS);
            assertEquals(201, account.status(), account.body());
            ids.add(account.json().get("id").asText());
        }
        accounts.addAll(ids);
        return ids;
    }

    /** Every account opened so far. */
    public List<String> accounts() {
        return List.copyOf(accounts);
    }

    /** A new payment on {@code account} with the account's next sequence; {@code key} is also its reference. */
    public Payment payment(String account, String type, long amount, String key) {
        long sequence = sequences.merge(account, 1L, Long::sum);
        return new Payment(key, "/accounts/" + account + "/transactions", account, amount, "{\"type\":\"" + type + "\",\"amount\":" + amount + ",\"sequence\":"
                + sequence + ",\"reference\":\"" + key + "\"}");
    }

    /** Any other POST of the API: {@code body} to {@code path} under {@code key}. */
    public static Payment request(String path, String key, String body) {
        return new Payment(key, path, null, 0, body);
    }

    /** Sends {@code payment} once, to instance {@code instance}. */
    public CompletableFuture<Answer> send(Payment payment, int instance) {
        return send(bases.get(instance), payment.path(), payment.key(), payment.body(), TIMEOUT);
    }

    /**
     * Opens an account for each of {@code clients} clients (client {@code i} on instance {@code i mod n}), then
     * has each credit its own {@code perSecond} times a second until {@link #stop()}.
     */
    public void steady(int clients, int perSecond) throws Exception {
        List<String> own = openAccounts(clients);
        steadyClients = Executors.newScheduledThreadPool(clients);
        for (int i = 0; i < clients; i++) {
            URI base = bases.get(i % bases.size());
            String account = own.get(i);
            steadyClients.scheduleAtFixedRate(() -> {
                Payment credit = payment(account, "CREDIT", 1, name + "-" + UUID.randomUUID());
                send(base, credit.path(), credit.key(), credit.body(), STEADY_TIMEOUT).join();
            }, 0, 1_000_000 / perSecond, TimeUnit.MICROSECONDS);
        }
    }

    /** Stops the steady clients and waits for their requests under way. */
    public void stop() throws InterruptedException {
        steadyClients.shutdown();
        if (!steadyClients.awaitTermination(30, TimeUnit.SECONDS)) {
            steadyClients.shutdownNow();
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

    /** One wave: a new credit per account, each sent {@link #copies} times at once, each copy to its final answer. */
    public void wave() throws Exception {
        List<CompletableFuture<Answer>> all = new ArrayList<>();
        int wave = waves++;
        long amount = 1 + (wave * 38L + 7) % 500; // one amount a wave, another the next
        for (String account : accounts()) {
            Payment payment = payment(account, "CREDIT", amount, name + "-" + wave + "-" + UUID.randomUUID());
            payments.put(payment.key(), payment);
            for (int copy = 0; copy < copies; copy++) {
                all.add(untilFinal(bases.get(copy % bases.size()), payment.path(), payment.key(), payment.body(), payment));
            }
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(GIVE_UP.toSeconds() + 30, TimeUnit.SECONDS);
    }

    /**
     * {@code payment} sent to instance {@code instance}, and sent again after every answer that is not final (a 503,
     * a 409 request-in-progress, none), until one is; the key is then one of those {@link #reconcile()} holds the
     * ledger against.
     */
    public CompletableFuture<Answer> untilFinal(Payment payment, int instance) {
        payments.put(payment.key(), payment);
        return untilFinal(bases.get(instance), payment.path(), payment.key(), payment.body(), payment);
    }

    /** One copy: sent, and sent again after every answer that is not final, until one is (or the time is up). */
    private CompletableFuture<Answer> untilFinal(URI base, String path, String key, String body, Payment payment) {
        long deadline = System.nanoTime() + GIVE_UP.toNanos();
        return attempt(base, path, key, body, payment, deadline);
    }

    private CompletableFuture<Answer> attempt(URI base, String path, String key, String body, Payment payment, long deadline) {
        return send(base, path, key, body, TIMEOUT).thenCompose(answer -> {
            if (observe(payment, answer) || System.nanoTime() > deadline) {
                return CompletableFuture.completedFuture(answer);
            }
            return CompletableFuture.supplyAsync(() -> null, BACK_OFF)
                    .thenCompose(ignored -> attempt(base, path, key, body, payment, deadline));
        });
    }

    /** The key sent once more, again after a 503, a 409 request-in-progress or no answer: its first other answer. */
    private CompletableFuture<Answer> replay(URI base, Payment payment, long deadline) {
        return post(base, payment.path(), payment.key(), payment.body(), TIMEOUT).exceptionally(failure -> Answer.NONE)
                .thenCompose(answer -> {
                    boolean transient_ = answer.status() == 503 || answer.status() == NO_ANSWER
                            || (answer.status() == 409 && answer.type().equals("/problems/request-in-progress"));
                    if (!transient_ || System.nanoTime() > deadline) {
                        return CompletableFuture.completedFuture(answer);
                    }
                    return CompletableFuture.supplyAsync(() -> null, BACK_OFF).thenCompose(ignored -> replay(base, payment, deadline));
                });
    }

    /** One POST, uncounted; fails when no answer comes. */
    private CompletableFuture<Answer> post(URI base, String path, String key, String body, Duration timeout) {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Authorization", client.authorization())
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenApply(Answer::of);
    }

    /** One POST, counted with its answer ({@link Answer#NONE} when none came) and its latency. */
    private CompletableFuture<Answer> send(URI base, String path, String key, String body, Duration timeout) {
        sent.increment();
        long start = System.nanoTime();
        return post(base, path, key, body, timeout).exceptionally(failure -> Answer.NONE).thenApply(answer -> {
            long micros = (System.nanoTime() - start) / 1_000;
            latenciesMicros.add(micros);
            slowestMicros.merge(answer.status(), micros, Math::max);
            statuses.computeIfAbsent(answer.status(), status -> new LongAdder()).increment();
            return answer;
        });
    }

    /** Notes what breaks a promise, and says whether the answer is final for the key. */
    private boolean observe(Payment payment, Answer answer) {
        switch (answer.status()) {
            case 201 -> {
                if (payment != null) {
                    Answer original = originals.putIfAbsent(payment.key(), answer);
                    if (original != null && !original.body().equals(answer.body())) {
                        violations.add("key " + payment.key() + " answered two different 201s");
                    }
                    if (!answer.isReplay() && !applied.add(payment.key())) {
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
            case NO_ANSWER -> {
                if (!cutConnectionsExpected) {
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
     * Every key of the waves sent once more must replay its 201 byte for byte; the ledger (read through
     * the API) must hold exactly one entry per answered key and nothing else, and each balance the sum of
     * its answered credits. Prints the counts; answers the number of double applications.
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
                if (replay.status() != 201 || !replay.isReplay() || !replay.body().equals(original.body())) {
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
        for (String account : accounts()) {
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
                    } else if (answer == null || !answer.json().get("id").asText().equals(entry.get("id").asText())) {
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
        System.out.printf("[%s] keys %d (x%d copies), waves %d, applied %d, double applications %d, replays failed %d; %s%n",
                name, payments.size(), copies, waves, entries, doubles, replayFailures, summary());
        assertTrue(violations.isEmpty(), "broken promises: " + violations.subList(0, Math.min(10, violations.size())));
        assertEquals(payments.size(), entries, "one ledger entry per key");
        assertEquals(0, replayFailures, "every 201 replays byte for byte");
        return doubles;
    }

    private JsonNode getJson(URI base, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT)
                .header("Authorization", client.authorization()).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body());
    }

    /** Requests counted so far. */
    public long sent() {
        return sent.sum();
    }

    /** Answers counted so far, by status ({@link #NO_ANSWER}: none came). */
    public Map<Integer, Long> statuses() {
        Map<Integer, Long> counts = new TreeMap<>();
        statuses.forEach((status, n) -> counts.put(status, n.sum()));
        return counts;
    }

    /** The slowest answer with {@code status} so far, in milliseconds; 0 when none came. */
    public double slowestMillis(int status) {
        return slowestMicros.getOrDefault(status, 0L) / 1000.0;
    }

    /**
     * Keys whose first 201 was a replay: an earlier attempt was applied, but its answer never reached the
     * client (a 503 for a statement that committed after its bound, an answer lost with the connection).
     */
    public long appliedUnanswered() {
        return originals.values().stream().filter(Answer::isReplay).count();
    }

    /** Answers counted so far that were not 201. */
    public long failed() {
        return statuses().entrySet().stream().filter(e -> e.getKey() != 201).mapToLong(Map.Entry::getValue).sum();
    }

    /** Latency at percentile {@code p} (0-100) so far, in milliseconds. */
    private double latencyMillis(double p) {
        List<Long> sorted;
        synchronized (latenciesMicros) {
            sorted = new ArrayList<>(latenciesMicros);
        }
        if (sorted.isEmpty()) {
            return 0;
        }
        Collections.sort(sorted);
        return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(p / 100 * sorted.size()))) / 1000.0;
    }

    public String summary() {
        return String.format("%d requests sent, answers by status %s, p50 %.1f ms, p99 %.1f ms", sent(), statuses(),
                latencyMillis(50), latencyMillis(99));
    }
}
