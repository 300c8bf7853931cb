package dev.ledger.shard;

import dev.ledger.outbox.EventReconciliation;
import dev.ledger.outbox.EventTap;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIf;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.ledger.testing.LedgerApi.transaction;
import static dev.ledger.testing.LedgerApi.transferBody;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client moved to another shard and back under load, across two instances of the packaged application: the client
 * {@code mover} from the shard {@code default} (a database of the shared server) to {@code two} (a cluster of the
 * test's own) through one instance, then back through the other, while both instances take payments of {@code mover}
 * and of {@code stayer} (on {@code default} throughout), each account's payments one after another with increasing
 * sequences, each key retried (through the other instance) until it has a final answer. Counted and printed: payments
 * sent, applied, double applications (0), answers by status and client; the mover's pause (the longest wait of one of
 * its payments for its final answer); the stayer's 503s (0: other clients never pause); money per account; every
 * event published once and in order (one per applied payment, reconciled with the ledger); a hold made before the
 * moves posted after them; and on the shard {@code two}, which the client left, its fence and none of its rows. The
 * instances start while shard two is down, and migrate and serve it once it is up. Then a move that would pause its
 * client past {@code ledger.moves.max-pause} gives up in time, and the client stays where it was, served.
 */
@EnabledIf(value = "dev.ledger.testing.PackagedApp#configured", disabledReason = "needs the local servers (tests.it.* properties)")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClientMoveIT {
    private static final String DATABASE = PackagedApp.DATABASE + "_moves";
    private static final String MOVER = "mover";
    private static final String STAYER = "stayer";
    private static final String OPS = "ops";
    /** The one client the settings put on shard two, which is down when the instances start. */
    private static final String LATE = "late";
    private static final Map<String, String> KEYS = Map.of(MOVER, "mover-key-0123456789abcdefgh", STAYER,
            "stayer-key-0123456789abcdefgh", OPS, "operator-key-0123456789abcdefgh", LATE, "late-key-0123456789abcdefghij");
    private static final int ACCOUNTS_EACH = 6;
    /** {@code ledger.moves.max-pause} of the instances. */
    private static final Duration MAX_PAUSE = Duration.ofSeconds(2);
    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*\"([0-9a-f-]{36})\"");

    private static PostgresServer two;
    private static List<PackagedApp> instances;

    /**
     * Two instances started while shard two is down (nothing listens on its port yet): they start, serve the default
     * shard's clients, answer shard two's client 503 and say so in readiness; once shard two is up they migrate it and
     * serve its client, with no restart.
     */
    @BeforeAll
    static void twoShardsAndTwoInstances() throws Exception {
        int port = Integer.getInteger("tests.moves.pg-port", 0);
        if (port == 0) {
            try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
                port = free.getLocalPort();
            }
        }
        PackagedApp.recreateDatabase(DATABASE);
        StringBuilder apiKeys = new StringBuilder();
        KEYS.forEach((client, key) -> apiKeys.append(apiKeys.isEmpty() ? "" : ",").append(client).append(':')
                .append(PackagedApp.sha256Hex(key)));
        Map<String, String> settings = new TreeMap<>(PackagedApp.onDatabase(DATABASE));
        settings.putAll(Map.of(
                "LEDGER_SHARDS_TWO_URL", "postgresql://127.0.0.1:" + port + "/postgres",
                "LEDGER_SHARDS_TWO_USERNAME", "postgres",
                "LEDGER_API_KEYS", apiKeys.toString(),
                "LEDGER_MOVES_OPERATORS", OPS,
                "LEDGER_EVENTS_RABBITMQ_ENABLED", "true",
                "RABBITMQ_HOST", "127.0.0.1",
                "RABBITMQ_PORT", Integer.toString(EventTap.SHARED_PORT)));
        settings.put("RABBITMQ_VIRTUAL_HOST", EventTap.SHARED_VHOST);
        settings.put("LEDGER_EVENTS_RABBITMQ_QUEUE", "");
        settings.put("LEDGER_SHARDS_TWO_CLIENTS", LATE);
        settings.put("LEDGER_MOVES_MAX_PAUSE", MAX_PAUSE.toMillis() + "ms");
        instances = PackagedApp.startTogether(List.of(
                () -> PackagedApp.start(settings, "client-move-a.log"),
                () -> PackagedApp.start(settings, "client-move-b.log")));
        for (PackagedApp app : instances) {
            HttpResponse<String> ready = app.get("/q/health/ready", null);
            assertEquals(200, ready.statusCode(), ready.body());
            assertTrue(ready.body().contains("DOWN (not migrated yet"), ready.body());
            HttpResponse<String> refused = app.post("/accounts", KEYS.get(LATE), UUID.randomUUID().toString(), "{\"currency\":\"EUR\"}");
            assertEquals(503, refused.statusCode(), refused.body());
        }
        two = new PostgresServer(port);
        long up = System.nanoTime();
        for (PackagedApp app : instances) {
            await().atMost(Duration.ofSeconds(30)).until(() -> app.post("/accounts", KEYS.get(LATE), UUID.randomUUID().toString(),
                    "{\"currency\":\"EUR\"}").statusCode() == 201);
        }
        System.out.printf("[client-move] shard two down at start: both instances ready, its client answered 503; served "
                + "%d ms after it came up%n", (System.nanoTime() - up) / 1_000_000);
    }

    @AfterAll
    static void stop() throws Exception {
        if (instances != null) {
            for (PackagedApp app : instances) {
                app.close();
            }
        }
        if (two != null) {
            two.close();
        }
    }

    @Test
    @Order(1)
    void aClientMovedAndBackUnderLoadLosesNothingAppliesNothingTwiceAndPausesAlone() throws Exception {
        PackagedApp a = instances.get(0);
        PackagedApp b = instances.get(1);
        try (EventTap tap = EventTap.onSharedBroker()) {
            Map<String, List<String>> accounts = new TreeMap<>();
            for (String client : List.of(MOVER, STAYER)) {
                List<String> ids = new ArrayList<>();
                for (int i = 0; i < ACCOUNTS_EACH; i++) {
                    ids.add(open(a, client));
                }
                accounts.put(client, ids);
            }
            // a hold of the mover's between two accounts of its own, made before the moves and posted after them
            String payer = open(a, MOVER);
            String payee = open(a, MOVER);
            HttpResponse<String> funded = a.post("/accounts/" + payer + "/transactions", KEYS.get(MOVER), UUID.randomUUID().toString(),
                    transaction("CREDIT", 1000, 1));
            assertEquals(201, funded.statusCode(), funded.body());
            HttpResponse<String> hold = a.post("/transfers", KEYS.get(MOVER), UUID.randomUUID().toString(),
                    transferBody(payer, payee, 300, "\"pending\":true,\"timeoutSeconds\":600"));
            assertEquals(201, hold.statusCode(), hold.body());
            String holdId = idOf(hold.body());

            Load load = new Load(List.of(a, b), accounts);
            load.start();
            load.await(150);
            HttpResponse<String> there = move(a, "two");
            assertEquals(200, there.statusCode(), there.body());
            assertTrue(there.body().contains("\"moved\":true"), there.body());
            // back within 2 s (2 × ledger.moves.refresh), before the first move's clean of the default shard is due: that
            // clean must find the client back and delete nothing (seen deleting the copied-back rows: 404s)
            load.await(60);
            String back = moveClientScript(b, "default"); // the procedure as shipped: ops/move-client
            assertTrue(back.contains("\"moved\":true"), back);
            load.await(150);
            load.stop();

            HttpResponse<String> posted = b.post("/transfers/" + holdId + "/post", KEYS.get(MOVER), UUID.randomUUID().toString(), "{}");
            assertTrue(posted.statusCode() == 200 || posted.statusCode() == 201, posted.body());
            assertTrue(posted.body().contains("\"status\":\"posted\""), posted.body());
            HttpResponse<String> again = move(a, "default");
            assertTrue(again.body().contains("\"moved\":false"), again.body());
            HttpResponse<String> notAnOperator = a.send(a.request("/admin/client-moves").header("Content-Type", "application/json")
                    .header("Authorization", "Bearer " + KEYS.get(MOVER))
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"client\":\"stayer\",\"to\":\"two\"}")).build());
            assertEquals(404, notAnOperator.statusCode(), notAnOperator.body());

            System.out.printf("[client-move] there: %s%n[client-move] back: %s%n", there.body(), back.strip());
            System.out.printf("[client-move] payments sent %d, applied %d; answers by client and status %s; mover's longest "
                            + "wait for a final answer %d ms, stayer's %d ms%n", load.sent(), load.applied(), load.answers,
                    load.longest(MOVER), load.longest(STAYER));
            assertEquals(0, load.answers.getOrDefault(STAYER + " 503", new AtomicLong()).get(), "the stayer paused: " + load.answers);
            assertTrue(load.answers.getOrDefault(MOVER + " 201", new AtomicLong()).get() > 0, "the mover was served");

            try (Connection home = PackagedApp.database(DATABASE); Connection left = two.connect("postgres")) {
                long doubles = 0;
                for (String client : List.of(MOVER, STAYER)) {
                    for (String account : accounts.get(client)) {
                        List<Long> amounts = load.appliedAmounts(account);
                        long expected = amounts.stream().mapToLong(Long::longValue).sum();
                        assertEquals(expected, one(home, "SELECT balance FROM accounts WHERE id = ?", account), account + "'s balance");
                        doubles += one(home, "SELECT count(*) FROM ledger_entries WHERE account_id = ?", account) - amounts.size();
                    }
                }
                System.out.printf("[client-move] double applications %d%n", doubles);
                assertEquals(700, one(home, "SELECT balance FROM accounts WHERE id = ?", payer), "the hold's payer");
                assertEquals(300, one(home, "SELECT balance FROM accounts WHERE id = ?", payee), "the hold's payee");
                assertEquals(0, doubles, "entries beyond the payments answered 201");
                // the shard left is cleaned once every instance has read the switch (2 × ledger.moves.refresh)
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                    assertEquals(0, one(left, "SELECT count(*) FROM accounts WHERE owner = ?", MOVER), "the mover's rows left on two");
                    assertEquals(0, one(left, "SELECT count(*) FROM idempotency_records WHERE client = ?", MOVER));
                });
                assertEquals(1, one(left, "SELECT count(*) FROM client_fences WHERE client = ?", MOVER), "its fence on two");
                assertEquals(0, one(home, "SELECT count(*) FROM client_fences WHERE client = ?", MOVER), "no fence at home");

                List<String> all = new ArrayList<>(accounts.get(MOVER));
                all.addAll(accounts.get(STAYER));
                await().atMost(Duration.ofSeconds(30)).until(() ->
                        one(home, "SELECT count(*) FROM outbox_deliveries WHERE account_id::text = ANY (string_to_array(?, ','))",
                                String.join(",", all)) == 0);
                tap.drain(Duration.ofSeconds(5));
                EventReconciliation events = EventReconciliation.of(tap.deliveries(), home, all);
                Map<String, Long> copies = new TreeMap<>();
                tap.deliveries().stream().filter(d -> all.contains(d.accountId()) && !d.redelivered())
                        .forEach(d -> copies.merge(d.eventId(), 1L, Long::sum));
                copies.forEach((event, times) -> {
                    if (times > 1) {
                        EventTap.Delivery first = tap.deliveries().stream().filter(d -> d.eventId().equals(event)).findFirst().orElseThrow();
                        System.out.printf("[client-move] event %s (%s of %s, %s) received %d times%n", event, first.type(),
                                accounts.get(MOVER).contains(first.accountId()) ? MOVER : STAYER, first.resourceId(), times);
                    }
                });
                System.out.printf("[client-move] events: expected %d, received %d, missing %d, duplicates %d, split %d, "
                        + "out of order %d%n", events.expected, events.deliveries, events.missing, events.duplicates, events.split,
                        events.outOfOrder);
                assertEquals(0, events.missing, "events lost");
                assertEquals(0, events.duplicates + events.split, "events twice");
                assertEquals(0, events.outOfOrder, "events out of order");
            }
        }
    }

    /**
     * A move whose copy cannot finish within {@code ledger.moves.max-pause}: here the target holds a row of the client's
     * from an earlier stay, locked by this test, so that clearing it waits. The move gives up at the bound, the target
     * keeps nothing of it, the fence comes down, and the client is served on its shard as before.
     */
    @Test
    @Order(2)
    void aMoveThatWouldPauseItsClientPastTheBoundGivesUpInTimeAndTheClientStaysServed() throws Exception {
        PackagedApp a = instances.get(0);
        PackagedApp b = instances.get(1);
        String account = open(a, STAYER);
        String stale = UUID.randomUUID().toString();
        try (Connection target = two.connect("postgres"); Statement sql = target.createStatement()) {
            sql.execute("INSERT INTO accounts (id, owner, currency) VALUES ('" + stale + "', '" + STAYER + "', 'EUR')");
            target.setAutoCommit(false);
            sql.execute("SELECT 1 FROM accounts WHERE id = '" + stale + "' FOR UPDATE"); // held until the rollback below
            long started = System.nanoTime();
            HttpResponse<String> refused = moveOnce(a, STAYER, "two");
            long tookMillis = (System.nanoTime() - started) / 1_000_000;
            target.rollback();
            System.out.printf("[client-move] a move that would pause past %d ms: answered %d in %d ms: %s%n",
                    MAX_PAUSE.toMillis(), refused.statusCode(), tookMillis, refused.body());
            assertEquals(400, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("ledger.moves.max-pause"), refused.body());
            assertTrue(tookMillis >= MAX_PAUSE.toMillis() - 100 && tookMillis < MAX_PAUSE.toMillis() + 3_000,
                    "gave up at the bound: " + tookMillis + " ms");
            target.setAutoCommit(true);
            assertEquals(1, one(target, "SELECT count(*) FROM accounts WHERE owner = ?", STAYER), "the target kept none of the copy");
        }
        // not fenced, not moved: served where it was, through either instance
        int sequence = 1;
        for (PackagedApp via : List.of(a, b)) {
            HttpResponse<String> credited = via.post("/accounts/" + account + "/transactions", KEYS.get(STAYER),
                    UUID.randomUUID().toString(), transaction("CREDIT", 10, sequence++));
            assertEquals(201, credited.statusCode(), credited.body());
        }
        try (Connection home = PackagedApp.database(DATABASE)) {
            assertEquals(20, one(home, "SELECT balance FROM accounts WHERE id = ?", account));
            assertEquals(0, one(home, "SELECT count(*) FROM client_fences WHERE client = ?", STAYER), "its fence taken down");
        }
        String metrics = a.get("/q/metrics", null).body();
        assertTrue(metrics.contains("ledger_client_moves_seconds_count{result=\"refused\"} 1.0"), metrics);
        assertTrue(metrics.contains("ledger_client_moves_seconds_count{result=\"moved\"}"), metrics);
    }

    /** {@code ops/move-client mover <to>} against {@code via}: its output, once it exited 0. */
    private static String moveClientScript(PackagedApp via, String to) throws Exception {
        ProcessBuilder script = new ProcessBuilder("bash", "ops/move-client", MOVER, to).redirectErrorStream(true);
        script.environment().put("LEDGER_URL", via.baseUrl());
        script.environment().put("LEDGER_OPERATOR_KEY", KEYS.get(OPS));
        Process process = script.start();
        String output = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, process.waitFor(), output);
        return output;
    }

    /** The move, sent again while it answers 503 (a lock on the old shard not granted in time: the client stayed). */
    private static HttpResponse<String> move(PackagedApp via, String to) throws Exception {
        HttpResponse<String> answer = null;
        for (int attempt = 1; attempt <= 10; attempt++) {
            answer = moveOnce(via, MOVER, to);
            if (answer.statusCode() != 503) {
                return answer;
            }
            System.out.printf("[client-move] the move to %s answered 503, sent again: %s%n", to, answer.body());
        }
        return answer;
    }

    private static HttpResponse<String> moveOnce(PackagedApp via, String client, String to) throws Exception {
        return via.send(via.request("/admin/client-moves").header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + KEYS.get(OPS))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"client\":\"" + client + "\",\"to\":\"" + to + "\"}"))
                .build());
    }

    private static String open(PackagedApp via, String client) throws Exception {
        HttpResponse<String> opened = via.post("/accounts", KEYS.get(client), UUID.randomUUID().toString(), "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        return idOf(opened.body());
    }

    private static String idOf(String body) {
        Matcher id = ID.matcher(body);
        assertTrue(id.find(), body);
        return id.group(1);
    }

    private static long one(Connection db, String sql, String value) throws Exception {
        try (PreparedStatement query = db.prepareStatement(sql)) {
            if (sql.contains("account_id = ?") || sql.contains("WHERE id = ?")) {
                query.setObject(1, UUID.fromString(value));
            } else {
                query.setString(1, value);
            }
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    /**
     * One worker per account, each sending its account's credits one after another (sequence 2, 3, …; the first
     * account's 1 is its funding), alternating the instances, every key retried until its answer is final.
     */
    private static final class Load {
        private final List<PackagedApp> instances;
        private final Map<String, List<String>> accounts;
        private final AtomicBoolean stopping = new AtomicBoolean();
        private final List<CompletableFuture<Void>> workers = new ArrayList<>();
        final Map<String, AtomicLong> answers = new ConcurrentHashMap<>();
        private final Map<String, List<Long>> applied = new ConcurrentHashMap<>();
        private final Map<String, AtomicLong> longest = new ConcurrentHashMap<>();
        private final AtomicLong sent = new AtomicLong();
        private final java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newCachedThreadPool();

        Load(List<PackagedApp> instances, Map<String, List<String>> accounts) {
            this.instances = instances;
            this.accounts = accounts;
        }

        void start() {
            accounts.forEach((client, ids) -> ids.forEach(account -> workers.add(CompletableFuture.runAsync(() -> work(client, account),
                    threads))));
        }

        /** Until {@code count} more payments were applied. */
        void await(long count) {
            long until = applied() + count;
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> applied() >= until);
        }

        void stop() {
            stopping.set(true);
            workers.forEach(CompletableFuture::join);
            threads.shutdown();
        }

        long sent() {
            return sent.get();
        }

        long applied() {
            return applied.values().stream().mapToLong(List::size).sum();
        }

        List<Long> appliedAmounts(String account) {
            return applied.getOrDefault(account, List.of());
        }

        long longest(String client) {
            return longest.getOrDefault(client, new AtomicLong()).get();
        }

        private void work(String client, String account) {
            long sequence = 1;
            int turn = 0;
            List<Long> amounts = java.util.Collections.synchronizedList(new ArrayList<>());
            applied.put(account, amounts);
            while (!stopping.get()) {
                sequence++;
                String key = UUID.randomUUID().toString();
                long amount = 1 + (sequence % 9);
                long started = System.nanoTime();
                while (true) {
                    PackagedApp via = instances.get(turn++ % instances.size());
                    int status;
                    String body = "";
                    try {
                        sent.incrementAndGet();
                        HttpResponse<String> answer = via.post("/accounts/" + account + "/transactions", KEYS.get(client), key,
                                transaction("CREDIT", amount, sequence));
                        status = answer.statusCode();
                        body = answer.body();
                    } catch (Exception e) {
                        status = -1;
                    }
                    answers.computeIfAbsent(client + " " + status, ignored -> new AtomicLong()).incrementAndGet();
                    if (status == 201) {
                        amounts.add(amount);
                        break;
                    }
                    boolean inFlight = status == 409 && body.contains("request-in-progress");
                    if (status != 503 && !inFlight && status != -1) {
                        throw new AssertionError(client + "'s payment answered " + status + ": " + body);
                    }
                }
                long waited = (System.nanoTime() - started) / 1_000_000;
                longest.computeIfAbsent(client, ignored -> new AtomicLong()).accumulateAndGet(waited, Math::max);
            }
        }
    }
}
