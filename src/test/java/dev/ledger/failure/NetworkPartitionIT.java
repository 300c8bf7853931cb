package dev.ledger.failure;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.dependency.PostgresReadinessCheck;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.NetworkNamespace;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.PaymentLoad.Answer;
import dev.ledger.testing.PaymentLoad.Payment;
import dev.ledger.testing.PostgresServer;
import dev.ledger.testing.RedisServer;
import dev.ledger.testing.SecondLane;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static dev.ledger.testing.LedgerApi.transaction;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Readiness and payments behind a real network partition: the packaged application on this host, its
 * PostgreSQL and its Redis each in a network namespace of the test's own ({@link NetworkNamespace}), joined by
 * a veth link that the test sets down (every packet lost, silently: no reset, no ICMP) and up again. Readiness
 * is probed as a balancer does (every 250 ms, each probe given up after 2 s) while payments go on, one new
 * payment per account at a time, each retried with its key until it has a final answer ({@link PaymentLoad}
 * waves). Four outages:
 * <ul>
 *   <li>PostgreSQL cut off for 20 s: every probe answers 503 within the probe timeout, every payment 503 within
 *       its bound; readiness is UP again within 3 s of the heal, and every key is then applied once;</li>
 *   <li>Redis cut off for 6 s: every probe answers 200 with Redis DOWN in its data, every payment 201 through
 *       PostgreSQL alone;</li>
 *   <li>commit acknowledgements lost: statements held in PostgreSQL by a row lock, the link cut, the lock
 *       released, so that they commit while their answers cannot leave; after the heal each key replays
 *       its commit (applied once, its balance the sum of its answered credits). It runs before the restart
 *       below, while every connection of the pool is alive: each of its four statements must reach PostgreSQL
 *       and wait there, and after the restart a connection the pool still held once failed one at once (reset
 *       by peer);</li>
 *   <li>PostgreSQL restarted while cut off for 6 s: as the first, and the connections it had are gone at the
 *       heal;</li>
 *   <li>failing closed ({@code ledger.fast-path.fail-closed=true}, the application started again with it), Redis cut
 *       off: a payment 503 with {@code Retry-After} in its bound, nothing applied, reads served, readiness DOWN
 *       naming Redis; after the heal the same key applied once.</li>
 * </ul>
 * Each prints its counts. Skipped (an assumption) only where namespaces cannot be made: not root, or no {@code ip netns}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@SecondLane
class NetworkPartitionIT {
    /** A balancer's probe timeout: every readiness answer must come within it. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration PROBE_EVERY = Duration.ofMillis(250);
    /** How many probes an outage lasts: 6 s at 4 a second. */
    private static final int PROBES = 24;
    /**
     * The long outage of PostgreSQL: 20 s. A connection that took a statement in its first seconds would resume only
     * at its next retransmission, 25 s after it was sent (their intervals double from 200 ms): over 5 s after the heal,
     * unless the pool gives such connections up.
     */
    private static final int LONG_OUTAGE_PROBES = 80;
    /**
     * A payment's bound: Redis 300 ms, PostgreSQL 1.2 s and Redis 300 ms again (docs/failure-behaviour.md,
     * "Bounds"), with room for a busy machine.
     */
    private static final Duration PAYMENT_BOUND = Duration.ofSeconds(3);
    /** How soon after the heal readiness must answer UP again. */
    private static final Duration RECOVERY = Duration.ofSeconds(3);
    private static final int ACCOUNTS = 8;
    private static final String API_KEY = "network-partition-key-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static NetworkNamespace postgresHost;
    private static NetworkNamespace redisHost;
    private static PostgresServer postgres;
    private static RedisServer redis;
    private static PackagedApp app;

    @BeforeAll
    static void startTheServersBehindLinksAndTheApplication() throws Exception {
        Optional<String> unavailable = NetworkNamespace.unavailable();
        assumeTrue(unavailable.isEmpty(), () -> "no network partition can be made here: " + unavailable.orElseThrow());
        NetworkNamespace.removeLeftovers();
        postgresHost = NetworkNamespace.create();
        redisHost = NetworkNamespace.create();
        postgres = new PostgresServer(postgresHost);
        postgres.psql("postgres", "CREATE DATABASE ledger");
        redis = new RedisServer(redisHost);
        app = PackagedApp.start(Map.of(
                "QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + postgres.host() + "/ledger",
                "QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://" + postgres.host() + "/ledger",
                "QUARKUS_DATASOURCE_USERNAME", "postgres",
                "QUARKUS_REDIS_HOSTS", redis.url(),
                "LEDGER_API_KEYS", "partition:" + PackagedApp.sha256Hex(API_KEY),
                // warmed up as deployed: a first read of the reads' cold code (C1 alone, a busy machine) took over a second
                "LEDGER_WARM_UP_ROUNDS", "20"), "network-partition-it.log");
    }

    @AfterEach
    void healEveryLink() throws Exception {
        for (NetworkNamespace host : new NetworkNamespace[] {postgresHost, redisHost}) {
            if (host != null) {
                host.heal();
            }
        }
    }

    /** Everything stopped and removed, each step even when one before it failed. */
    @AfterAll
    static void stopEverything() throws Exception {
        Exception first = null;
        for (AutoCloseable resource : new AutoCloseable[] {app, redis, postgres, redisHost, postgresHost}) {
            try {
                if (resource != null) {
                    resource.close();
                }
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Test
    @Order(1)
    void postgresCutOffAnswers503WithinTheBoundsAndIsReadyPromptlyAfterTheHeal() throws Exception {
        PaymentLoad load = load("partition-postgres");
        load.openAccounts(ACCOUNTS);
        CompletableFuture<Outage> outage = CompletableFuture.supplyAsync(() -> outage(postgresHost, LONG_OUTAGE_PROBES, null, NetworkPartitionIT::ready));
        load.wavesUntil(outage, 2);
        long doubleApplications = load.reconcile();
        Outage seen = outage.join();
        report("PostgreSQL cut off", seen, load, doubleApplications);

        assertEveryProbe(seen, probe -> probe.status() == 503 && "DOWN".equals(data(probe, PostgresReadinessCheck.NAME, "postgresql")),
                "503, PostgreSQL DOWN");
        assertPaymentsAnswered(load, Set.of(201, 503));
        assertTrue(load.slowestMillis(503) <= PAYMENT_BOUND.toMillis(), "a payment's 503 took " + load.slowestMillis(503) + " ms");
        assertRecovered(seen);
        assertEquals(0, doubleApplications);
    }

    @Test
    @Order(2)
    void redisCutOffLeavesTheServiceReadyAndPaymentsGoOnThroughPostgres() throws Exception {
        PaymentLoad load = load("partition-redis");
        load.openAccounts(ACCOUNTS / 2); // answered at PostgreSQL's pace, its waves are many: fewer keys to reconcile
        CompletableFuture<Outage> outage = CompletableFuture.supplyAsync(() -> outage(redisHost, PROBES, null,
                probe -> ready(probe) && "UP".equals(data(probe, "Redis (idempotency fast path)", "redis"))));
        load.wavesUntil(outage, 2);
        long doubleApplications = load.reconcile();
        Outage seen = outage.join();
        report("Redis cut off", seen, load, doubleApplications);

        assertEveryProbe(seen, probe -> probe.status() == 200 && "DOWN".equals(data(probe, "Redis (idempotency fast path)", "redis")),
                "200, Redis DOWN");
        assertPaymentsAnswered(load, Set.of(201));
        assertRecovered(seen);
        assertEquals(0, doubleApplications);
    }

    @Test
    @Order(3)
    void commitsWhoseAcknowledgementsWereLostAreAppliedOnceAndReplayed() throws Exception {
        PaymentLoad load = load("partition-lost-acks");
        List<String> accounts = load.openAccounts(4);
        String ids = accounts.stream().map(id -> "'" + id + "'").collect(Collectors.joining(","));
        List<Payment> payments = new ArrayList<>();
        for (int i = 0; i < accounts.size(); i++) {
            payments.add(load.payment(accounts.get(i), "CREDIT", 100 + i, "partition-lost-ack-" + UUID.randomUUID()));
        }
        List<CompletableFuture<Answer>> sent;
        // The accounts' rows locked over PostgreSQL's own socket: each payment's statement reaches it and waits.
        Process lock = postgres.psqlSession("ledger");
        try (Writer session = new OutputStreamWriter(lock.getOutputStream(), StandardCharsets.UTF_8);
             BufferedReader output = new BufferedReader(new InputStreamReader(lock.getInputStream(), StandardCharsets.UTF_8))) {
            session.write("BEGIN;\nSELECT count(*) FROM (SELECT 1 FROM accounts WHERE id IN (" + ids + ") FOR UPDATE) locked;\n");
            session.flush();
            assertEquals(Integer.toString(accounts.size()), output.readLine(), "the rows locked");
            sent = payments.stream().map(payment -> load.send(payment, 0)).toList();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> Integer.parseInt(postgres.psql("ledger",
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%ledger_post_transaction%'")
                    .trim()) == payments.size());
            // every statement is in PostgreSQL: cut the link, then let them commit; their answers cannot leave
            postgresHost.cut();
            session.write("COMMIT;\n");
            session.flush();
        }
        assertTrue(lock.waitFor(30, TimeUnit.SECONDS), "the locking session ended");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> Integer.parseInt(postgres.psql("ledger",
                "SELECT count(*) FROM ledger_entries WHERE account_id IN (" + ids + ")").trim()) == payments.size());
        List<Answer> first = new ArrayList<>();
        for (CompletableFuture<Answer> answer : sent) {
            first.add(answer.get(60, TimeUnit.SECONDS));
        }
        postgresHost.heal();
        long healed = System.nanoTime();
        awaitProbe(NetworkPartitionIT::ready);
        Duration readyAfter = Duration.ofNanos(System.nanoTime() - healed);
        List<Answer> retried = new ArrayList<>();
        for (Payment payment : payments) {
            retried.add(load.untilFinal(payment, 0).get(120, TimeUnit.SECONDS));
        }
        long doubleApplications = load.reconcile();
        System.out.printf("[network-partition] lost acknowledgements: %d statements committed while the link was cut; "
                        + "answers while cut %s; ready %d ms after the heal; every key retried: %s; applied but unanswered %d, "
                        + "double applications %d; %s%n", payments.size(), statuses(first), readyAfter.toMillis(), statuses(retried),
                load.appliedUnanswered(), doubleApplications, load.summary());

        assertTrue(first.stream().allMatch(answer -> answer.status() == 503 && answer.body().contains("may or may not have been applied")),
                "503, maybe applied, while the link was cut: " + first);
        assertTrue(retried.stream().allMatch(answer -> answer.status() == 201 && answer.isReplay()), "each retry replays its commit: " + retried);
        assertEquals(payments.size(), load.appliedUnanswered());
        assertTrue(readyAfter.compareTo(RECOVERY) <= 0, "ready " + readyAfter.toMillis() + " ms after the heal");
        assertEquals(0, doubleApplications);
    }

    @Test
    @Order(4)
    void postgresRestartedWhileCutOffIsServedAgainPromptlyAfterTheHeal() throws Exception {
        PaymentLoad load = load("partition-postgres-restart");
        load.openAccounts(ACCOUNTS);
        CompletableFuture<Outage> outage = CompletableFuture.supplyAsync(() -> outage(postgresHost, PROBES, () -> {
            try {
                postgres.restart(); // over its own Unix socket: the cut link plays no part
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, NetworkPartitionIT::ready));
        load.wavesUntil(outage, 2);
        long doubleApplications = load.reconcile();
        Outage seen = outage.join();
        report("PostgreSQL restarted while cut off", seen, load, doubleApplications);

        assertEveryProbe(seen, probe -> probe.status() == 503, "503");
        assertPaymentsAnswered(load, Set.of(201, 503));
        assertRecovered(seen);
        assertEquals(0, doubleApplications);
    }

    /**
     * {@code ledger.fast-path.fail-closed=true} (the application restarted with it), Redis cut off: a POST is refused
     * 503 with {@code Retry-After} within its bound and nothing is applied, reads still answer, readiness is DOWN naming
     * Redis; after the heal the same key is applied once. The last test: the application stays failing closed.
     */
    @Test
    @Order(5)
    void failingClosedRedisCutOffRefusesPostsAndReadinessIsDownUntilTheHeal() throws Exception {
        app.kill();
        app.restart(Map.of("LEDGER_FAST_PATH_FAIL_CLOSED", "true", "LEDGER_WARM_UP_ROUNDS", "0",
                "LEDGER_FAST_PATH_BREAKER_DELAY", "200ms"));
        HttpResponse<String> opened = app.post("/accounts", API_KEY, UUID.randomUUID().toString(), "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        String account = JSON.readTree(opened.body()).path("id").asText();
        String transactions = "/accounts/" + account + "/transactions";
        assertEquals(201, app.post(transactions, API_KEY, UUID.randomUUID().toString(), transaction("CREDIT", 30, 1)).statusCode());
        Map<String, Double> before = Metrics.outcomes(app.get("/q/metrics", null).body(), "http");
        String key = UUID.randomUUID().toString();
        redisHost.cut();
        long started = System.nanoTime();
        HttpResponse<String> refused = app.post(transactions, API_KEY, key, transaction("CREDIT", 5, 2));
        long refusedMillis = (System.nanoTime() - started) / 1_000_000;
        HttpResponse<String> balance = app.get("/accounts/" + account, API_KEY);
        Probe probe = probe().join();
        redisHost.heal();
        System.out.printf("[network-partition] failing closed, Redis cut off: a payment answered %d in %d ms; a read %d; "
                + "readiness %d, Redis %s%n", refused.statusCode(), refusedMillis, balance.statusCode(), probe.status(),
                data(probe, "Redis (idempotency fast path)", "redis"));
        assertEquals(503, refused.statusCode(), refused.body());
        assertEquals("/problems/service-unavailable", JSON.readTree(refused.body()).path("type").asText());
        assertTrue(refused.headers().firstValue("Retry-After").isPresent(), refused.headers().toString());
        assertTrue(refusedMillis <= PAYMENT_BOUND.toMillis(), "refused after " + refusedMillis + " ms");
        assertEquals(200, balance.statusCode(), balance.body());
        assertEquals(30, JSON.readTree(balance.body()).path("balance").asLong(), "nothing applied");
        assertEquals(503, probe.status(), String.valueOf(probe.body()));
        assertEquals("DOWN", data(probe, "Redis (idempotency fast path)", "redis"));

        // healed: the breaker half-opens within its delay, and the same key is applied, once
        List<HttpResponse<String>> retried = new ArrayList<>();
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            retried.add(app.post(transactions, API_KEY, key, transaction("CREDIT", 5, 2)));
            return retried.get(retried.size() - 1).statusCode() != 503;
        });
        HttpResponse<String> accepted = retried.get(retried.size() - 1);
        assertEquals(201, accepted.statusCode(), accepted.body());
        assertTrue(accepted.headers().firstValue("Idempotent-Replayed").isEmpty(), "executed, not replayed");
        HttpResponse<String> replayed = app.post(transactions, API_KEY, key, transaction("CREDIT", 5, 2));
        assertEquals("true", replayed.headers().firstValue("Idempotent-Replayed").orElse(null), replayed.body());
        assertEquals(accepted.body(), replayed.body());
        assertEquals(35, JSON.readTree(app.get("/accounts/" + account, API_KEY).body()).path("balance").asLong());
        Map<String, Double> changed = Metrics.changed(before, Metrics.outcomes(app.get("/q/metrics", null).body(), "http"));
        System.out.printf("[network-partition] failing closed, healed: the key sent %d times more, applied once; outcomes "
                + "since the cut %s%n", retried.size() + 1, changed);
        assertEquals(retried.size(), changed.get("unavailable").intValue(), "each 503 counted: " + changed);
        assertEquals(1.0, changed.get("executed"), changed.toString());
        awaitProbe(NetworkPartitionIT::ready);
    }

    // --- outages, probes and reports

    /** A readiness probe's answer: its status (-1 when none came within the probe timeout), its time, its body. */
    private record Probe(int status, long millis, JsonNode body) {
    }

    /** What an outage showed: the probes sent while the link was cut, and how long after the heal recovery took. */
    private record Outage(List<Probe> whileCut, Duration recoveredAfter) {
    }

    /**
     * Cuts {@code host} off for {@code count} readiness probes sent as a balancer sends them (running {@code midway}
     * halfway, when given), heals it, then probes until {@code recovered} holds.
     */
    private static Outage outage(NetworkNamespace host, int count, Runnable midway, Predicate<Probe> recovered) {
        ScheduledExecutorService balancer = Executors.newSingleThreadScheduledExecutor();
        List<CompletableFuture<Probe>> probes = Collections.synchronizedList(new ArrayList<>());
        try {
            host.cut();
            balancer.scheduleAtFixedRate(() -> probes.add(probe()), 0, PROBE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
            Duration patience = PROBE_EVERY.multipliedBy(count * 4L);
            if (midway != null) {
                await().atMost(patience).pollInterval(Duration.ofMillis(50)).until(() -> probes.size() >= count / 2);
                midway.run();
            }
            await().atMost(patience).pollInterval(Duration.ofMillis(50)).until(() -> probes.size() >= count);
            balancer.shutdown();
            List<Probe> whileCut;
            synchronized (probes) {
                whileCut = probes.stream().map(CompletableFuture::join).toList();
            }
            host.heal();
            long healed = System.nanoTime();
            awaitProbe(recovered);
            return new Outage(whileCut, Duration.ofNanos(System.nanoTime() - healed));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            balancer.shutdownNow();
        }
    }

    private static CompletableFuture<Probe> probe() {
        long start = System.nanoTime();
        HttpRequest request = HttpRequest.newBuilder(URI.create(app.baseUrl() + "/q/health/ready")).timeout(PROBE_TIMEOUT).build();
        return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                .thenApply(response -> new Probe(response.statusCode(), (System.nanoTime() - start) / 1_000_000, json(response.body())))
                .exceptionally(noAnswer -> new Probe(-1, (System.nanoTime() - start) / 1_000_000, null));
    }

    /** Probes (one after the other) until one answers as {@code wanted}. */
    private static void awaitProbe(Predicate<Probe> wanted) {
        await().atMost(Duration.ofSeconds(60)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100))
                .until(() -> wanted.test(probe().join()));
    }

    private static boolean ready(Probe probe) {
        return probe.status() == 200;
    }

    /** The value of {@code key} in the data of the check named {@code check}; null when absent. */
    private static String data(Probe probe, String check, String key) {
        if (probe.body() == null) {
            return null;
        }
        for (JsonNode found : probe.body().path("checks")) {
            if (check.equals(found.path("name").asText())) {
                return found.path("data").path(key).asText(null);
            }
        }
        return null;
    }

    private static JsonNode json(String body) {
        try {
            return JSON.readTree(body);
        } catch (Exception e) {
            return null;
        }
    }

    private static PaymentLoad load(String name) {
        return new PaymentLoad(name, new ApiClient("partition", API_KEY), List.of(URI.create(app.baseUrl())));
    }

    private static void assertEveryProbe(Outage outage, Predicate<Probe> expected, String what) {
        List<Probe> other = outage.whileCut().stream().filter(expected.negate()).toList();
        long slowest = outage.whileCut().stream().mapToLong(Probe::millis).max().orElse(0);
        assertTrue(other.isEmpty(), other.size() + " of " + outage.whileCut().size() + " probes did not answer " + what
                + " within " + PROBE_TIMEOUT.toMillis() + " ms; the first: " + other.stream().findFirst().map(Probe::toString).orElse(""));
        assertTrue(slowest < PROBE_TIMEOUT.toMillis(), "a probe took " + slowest + " ms");
    }

    private static void assertPaymentsAnswered(PaymentLoad load, Set<Integer> allowed) {
        assertTrue(allowed.containsAll(load.statuses().keySet()), "payments answered " + load.statuses() + ", expected only " + allowed);
    }

    private static void assertRecovered(Outage outage) {
        assertTrue(outage.recoveredAfter().compareTo(RECOVERY) <= 0,
                "recovered " + outage.recoveredAfter().toMillis() + " ms after the heal, more than " + RECOVERY.toMillis());
    }

    private static void report(String what, Outage outage, PaymentLoad load, long doubleApplications) {
        Map<Integer, Long> probes = outage.whileCut().stream().collect(Collectors.groupingBy(Probe::status, TreeMap::new, Collectors.counting()));
        System.out.printf("[network-partition] %s: %d readiness probes while cut, by status %s, slowest %d ms; recovered %d ms "
                        + "after the heal; payments: slowest 503 %.0f ms, slowest 201 %.0f ms, applied but unanswered %d, "
                        + "double applications %d; %s%n", what, outage.whileCut().size(), probes,
                outage.whileCut().stream().mapToLong(Probe::millis).max().orElse(0), outage.recoveredAfter().toMillis(),
                load.slowestMillis(503), load.slowestMillis(201), load.appliedUnanswered(), doubleApplications, load.summary());
    }

    private static Map<Integer, Long> statuses(List<Answer> answers) {
        return answers.stream().collect(Collectors.groupingBy(Answer::status, TreeMap::new, Collectors.counting()));
    }
}
