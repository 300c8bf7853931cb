package dev.ledger.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Payments as clients send them while a test breaks something: each client opens an account of its
 * own, then credits it at a steady pace (one request at a time, the next sequence each time, gaps
 * allowed after an unknown outcome) until {@link #stop()}. Every answer is counted by status
 * (-1: no answer), with its latency.
 */
public final class PaymentLoad implements AutoCloseable {
    private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String apiKey;
    private final ScheduledExecutorService clients;
    private final List<String> accounts = Collections.synchronizedList(new ArrayList<>());
    private final Map<Integer, LongAdder> statuses = new ConcurrentHashMap<>();
    private final List<Long> latenciesMicros = Collections.synchronizedList(new ArrayList<>());
    private final LongAdder sent = new LongAdder();

    /**
     * Starts {@code clients} clients, spread over the instances at {@code baseUrls}, each sending
     * {@code perSecond} credits a second.
     */
    public PaymentLoad(List<String> baseUrls, String apiKey, int clients, int perSecond) throws Exception {
        this.apiKey = apiKey;
        this.clients = Executors.newScheduledThreadPool(clients);
        for (int i = 0; i < clients; i++) {
            String base = baseUrls.get(i % baseUrls.size()).replaceAll("/$", "");
            String account = open(base);
            accounts.add(account);
            AtomicLong sequence = new AtomicLong();
            this.clients.scheduleAtFixedRate(() -> credit(base, account, sequence.incrementAndGet()),
                    0, 1_000_000 / perSecond, TimeUnit.MICROSECONDS);
        }
    }

    private String open(String base) throws Exception {
        HttpResponse<String> opened = send(base + "/accounts", "{\"currency\":\"EUR\"}");
        Matcher id = ID.matcher(opened.body());
        if (opened.statusCode() != 201 || !id.find()) {
            throw new AssertionError("open failed: " + opened.statusCode() + " " + opened.body());
        }
        return id.group(1);
    }

    private void credit(String base, String account, long sequence) {
        long start = System.nanoTime();
        int status;
        try {
            status = send(base + "/accounts/" + account + "/transactions",
                    "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":" + sequence + "}").statusCode();
        } catch (Exception e) {
            status = -1;
        }
        sent.increment();
        latenciesMicros.add((System.nanoTime() - start) / 1_000);
        statuses.computeIfAbsent(status, s -> new LongAdder()).increment();
    }

    private HttpResponse<String> send(String url, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", "load-" + UUID.randomUUID())
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The clients' accounts. */
    public List<String> accounts() {
        return List.copyOf(accounts);
    }

    public long sent() {
        return sent.sum();
    }

    /** Answers by status so far (-1: no answer). */
    public Map<Integer, Long> statuses() {
        Map<Integer, Long> counts = new TreeMap<>();
        statuses.forEach((status, n) -> counts.put(status, n.sum()));
        return counts;
    }

    /** Answers that were not 201 so far. */
    public long failed() {
        return statuses().entrySet().stream().filter(e -> e.getKey() != 201).mapToLong(Map.Entry::getValue).sum();
    }

    /** Latency at percentile {@code p} (0-100) so far, in milliseconds. */
    public double latencyMillis(double p) {
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

    /** Stops sending and waits for the requests under way. */
    public void stop() throws InterruptedException {
        clients.shutdown();
        if (!clients.awaitTermination(30, TimeUnit.SECONDS)) {
            clients.shutdownNow();
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
