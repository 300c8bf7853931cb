package dev.ledger.testing;

import dev.ledger.testing.PaymentLoad.Answer;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A storm of transfers on a few accounts, as clients send them: transfers both ways between random pairs,
 * holds (some expiring within the storm), posts and voids of the holds made so far, reversals of the transfers
 * posted so far, debits and credits, and now and then a copy of a request under the same key sent at the same
 * time, {@code inFlight} requests at once through a {@link Door}, each sent again after a 503, a 409
 * request-in-progress or no answer, as a client does, until it has its outcome. It keeps every answer of every key, and what
 * was applied: the plain credits and debits per currency (the only changes of a currency's total), and the
 * transfers made or settled. {@link #summary()} prints the counts a failure test prints.
 */
public final class TransferStorm {
    /** How a request reaches the service: an HTTP POST here; a broker's command may stand in for it. */
    @FunctionalInterface
    public interface Door {
        Answer post(String path, String key, String body);
    }

    /** One request of the storm and every answer its key got (its copies'). */
    public record Request(String kind, String path, String key, String body, String currency, long amount,
                          List<Answer> answers) {
    }

    private static final Executor BACK_OFF = CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS);

    private final Door door;
    private final Map<String, List<String>> accountsByCurrency;
    private final Map<String, String> currencyOf = new ConcurrentHashMap<>();
    private final long seed;
    private final Random random;
    private final List<String> holds = Collections.synchronizedList(new ArrayList<>());
    private final List<String> posted = Collections.synchronizedList(new ArrayList<>());
    private final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, AtomicLong> sequences = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> creditsApplied = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> debitsApplied = new ConcurrentHashMap<>();
    private final Map<Integer, LongAdder> statuses = new ConcurrentHashMap<>();
    private final LongAdder sent = new LongAdder();

    public TransferStorm(Door door, Map<String, List<String>> accountsByCurrency, long seed) {
        this.door = door;
        this.accountsByCurrency = accountsByCurrency;
        accountsByCurrency.forEach((currency, accounts) -> accounts.forEach(account -> currencyOf.put(account, currency)));
        this.seed = seed;
        this.random = new Random(seed);
    }

    /** The door of HTTP POSTs to {@code base} as {@code client}. */
    public static Door http(ApiClient client, URI base) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        return (path, key, body) -> {
            HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "application/json").header("Authorization", client.authorization())
                    .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body)).build();
            try {
                return Answer.of(http.send(request, HttpResponse.BodyHandlers.ofString()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Answer.NONE;
            } catch (Exception e) {
                return Answer.NONE;
            }
        };
    }

    /** Sends {@code count} requests, {@code inFlight} at once (a copy counts as one), and waits for every answer. */
    public void run(int count, int inFlight) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(inFlight);
        List<Future<?>> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            all.add(clients.submit(() -> {
                Request request = next();
                send(request);
                if (request.answers().get(0).status() != PaymentLoad.NO_ANSWER && chance(5)) {
                    send(request); // a client's retry after its answer: the same answer, replayed
                }
            }));
            if (chance(4)) {
                Request copied = next();
                // the same request twice at once, as a client that did not wait for its first answer
                all.add(clients.submit(() -> send(copied)));
                all.add(clients.submit(() -> send(copied)));
            }
        }
        for (Future<?> request : all) {
            request.get(10, TimeUnit.MINUTES);
        }
        clients.shutdown();
    }

    private boolean chance(int percent) {
        synchronized (random) {
            return random.nextInt(100) < percent;
        }
    }

    private int pick(int bound) {
        synchronized (random) {
            return random.nextInt(bound);
        }
    }

    /** A new request, by the mix of the storm. */
    private Request next() {
        int roll = pick(100);
        List<String> currencies = new ArrayList<>(new TreeMap<>(accountsByCurrency).keySet());
        String currency = currencies.get(roll % 7 == 0 ? 1 % currencies.size() : 0);
        List<String> accounts = accountsByCurrency.get(currency);
        String debit = accounts.get(pick(accounts.size()));
        String credit = accounts.get(pick(accounts.size()));
        while (credit.equals(debit)) {
            credit = accounts.get(pick(accounts.size()));
        }
        long amount = 1 + pick(2_000);
        if (roll < 2 && currencies.size() > 1) {
            // an account of another currency: refused
            String other = accountsByCurrency.get(currencies.get((currencies.indexOf(currency) + 1) % currencies.size())).get(0);
            return request("transfer", "/transfers", transfer(debit, other, amount, ""), currency, amount);
        }
        if (roll < 32) {
            return request("transfer", "/transfers", transfer(debit, credit, amount, ""), currency, amount);
        }
        if (roll < 47) {
            String timeout = chance(20) ? "1" : "600";
            return request("hold", "/transfers", transfer(debit, credit, amount, "\"pending\":true,\"timeoutSeconds\":" + timeout),
                    currency, amount);
        }
        String hold = any(holds);
        if (roll < 60 && hold != null) {
            String body = chance(50) ? "{}" : "{\"amount\":" + (1 + pick(2_000)) + "}";
            return request("post", "/transfers/" + hold + "/post", body, null, 0);
        }
        if (roll < 68 && hold != null) {
            return request("void", "/transfers/" + hold + "/void", "{}", null, 0);
        }
        String transfer = any(posted);
        if (roll < 78 && transfer != null) {
            String body = chance(50) ? "{}" : "{\"amount\":" + (1 + pick(1_000)) + "}";
            return request("reversal", "/transfers/" + transfer + "/reversals", body, null, 0);
        }
        String account = roll % 2 == 0 ? debit : credit;
        String type = roll < 89 ? "CREDIT" : "DEBIT";
        long sequence = sequences.computeIfAbsent(account, ignored -> new AtomicLong(1_000_000_000_000L)).addAndGet(1_000_000);
        return request(type.toLowerCase(), "/accounts/" + account + "/transactions",
                "{\"type\":\"" + type + "\",\"amount\":" + amount + ",\"sequence\":" + sequence + "}", currencyOf.get(account), amount);
    }

    private static String transfer(String debit, String credit, long amount, String more) {
        return LedgerApi.transferBody(debit, credit, amount, more);
    }

    private String any(List<String> ids) {
        synchronized (ids) {
            return ids.isEmpty() ? null : ids.get(pick(ids.size()));
        }
    }

    private Request request(String kind, String path, String body, String currency, long amount) {
        Request request = new Request(kind, path, "storm-" + UUID.randomUUID(), body, currency, amount,
                Collections.synchronizedList(new ArrayList<>()));
        requests.add(request);
        return request;
    }

    /**
     * Sends the request, and again with its key after a 503, a 409 request-in-progress or no answer, as a client
     * does, after a short pause each time, until it has its outcome (or a minute passed); notes every answer, and
     * what the request applied when its outcome is the key's first (not a replay).
     */
    private void send(Request request) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        Answer answer;
        do {
            sent.increment();
            answer = door.post(request.path(), request.key(), request.body());
            request.answers().add(answer);
            statuses.computeIfAbsent(answer.status(), status -> new LongAdder()).increment();
        } while (!decided(answer) && System.nanoTime() < deadline && backedOff());
        boolean applied = (answer.status() == 201 || answer.status() == 200) && !answer.isReplay();
        if (!applied) {
            return;
        }
        switch (request.kind()) {
            case "credit" -> creditsApplied.computeIfAbsent(request.currency(), c -> new LongAdder()).add(request.amount());
            case "debit" -> debitsApplied.computeIfAbsent(request.currency(), c -> new LongAdder()).add(request.amount());
            case "hold" -> holds.add(answer.json().get("id").asText());
            case "transfer", "post", "reversal" -> posted.add(answer.json().get("id").asText());
            default -> {
            }
        }
    }

    /** Every request, with its answers. */
    public List<Request> requests() {
        synchronized (requests) {
            return List.copyOf(requests);
        }
    }

    /** The plain credits less the plain debits applied in {@code currency}: the only change of its total. */
    public long netTransactions(String currency) {
        return sum(creditsApplied, currency) - sum(debitsApplied, currency);
    }

    private static long sum(Map<String, LongAdder> sums, String currency) {
        LongAdder adder = sums.get(currency);
        return adder == null ? 0 : adder.sum();
    }

    /** The client's pause before it sends a key again (shorter than Retry-After, to keep the test short); true. */
    private static boolean backedOff() {
        CompletableFuture.runAsync(() -> { }, BACK_OFF).join();
        return true;
    }

    /** Whether the answer is the request's outcome: not a 503 or 500, not request-in-progress, not none. */
    private static boolean decided(Answer answer) {
        return answer.status() != PaymentLoad.NO_ANSWER && answer.status() < 500
                && !"/problems/request-in-progress".equals(answer.type());
    }

    /** Keys with more than one outcome that was not a replay: each applied (or refused) twice. */
    public long doubleApplications() {
        return requests().stream().filter(r -> List.copyOf(r.answers()).stream()
                .filter(a -> decided(a) && !a.isReplay()).count() > 1).count();
    }

    /** Keys whose outcomes differ in status or bytes. */
    public List<String> inconsistentAnswers() {
        List<String> found = new ArrayList<>();
        for (Request request : requests()) {
            List<Answer> finals;
            synchronized (request.answers()) {
                finals = request.answers().stream().filter(TransferStorm::decided).toList();
            }
            if (finals.stream().map(a -> a.status() + " " + a.body()).distinct().count() > 1) {
                found.add(request.path() + " " + request.body() + ": " + finals);
            }
        }
        return found;
    }

    /** Answers by status. */
    public Map<Integer, Long> statuses() {
        Map<Integer, Long> counts = new TreeMap<>();
        statuses.forEach((status, count) -> counts.put(status, count.sum()));
        return counts;
    }

    /** Applied requests (a first 2xx) by kind. */
    public Map<String, Long> appliedByKind() {
        Map<String, Long> counts = new TreeMap<>();
        for (Request request : requests()) {
            if (request.answers().stream().anyMatch(a -> (a.status() == 200 || a.status() == 201) && !a.isReplay())) {
                counts.merge(request.kind(), 1L, Long::sum);
            }
        }
        return counts;
    }

    /** Refusals by problem type. */
    public Map<String, Long> refusals() {
        Map<String, Long> counts = new TreeMap<>();
        for (Request request : requests()) {
            for (Answer answer : List.copyOf(request.answers())) {
                if (answer.status() >= 400 && !answer.isReplay()) {
                    counts.merge(answer.type(), 1L, Long::sum);
                }
            }
        }
        return counts;
    }

    /** Requests that are transfers of any kind (made, held, posted, voided, reversed). */
    public long transfersSent() {
        return requests().stream().filter(r -> !r.kind().equals("credit") && !r.kind().equals("debit")).count();
    }

    public String summary() {
        long transfers = transfersSent();
        return "seed " + seed + "; sent " + sent.sum() + " (" + requests().size() + " requests, " + transfers
                + " of them transfers, holds, posts, voids or reversals), applied " + appliedByKind() + ", double applications "
                + doubleApplications() + ", answers by status " + statuses() + ", refusals " + refusals();
    }
}
