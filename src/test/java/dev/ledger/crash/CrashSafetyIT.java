package dev.ledger.crash;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.LedgerApi;
import dev.ledger.testing.LedgerChecks;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.PaymentLoad.Answer;
import dev.ledger.testing.PaymentLoad.Payment;
import dev.ledger.testing.PostgresServer;
import dev.ledger.testing.RedisServer;
import dev.ledger.testing.TcpProxy;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Crash safety, proven on the packaged application (two instances) against a PostgreSQL and a Redis
 * of the test's own: bursts of payments, transfers, holds, posts, voids and reversals while the instance that
 * serves them is killed with SIGKILL at varying moments, while Redis is flushed, and while Redis and PostgreSQL restart. Then the same two
 * instances again with DynamoDB as the fast path (the tests' dynalite behind a proxy, a table of this
 * run's own), failing closed: SIGKILLs again, and DynamoDB cut away under a burst. Every key is
 * retried until it has a definitive answer (after a kill, through the other instance, while the
 * killed one restarts and then serves the next kill's burst); then every key must have been applied
 * at most once, every applied key must replay its original answer (from Postgres too), every
 * balance must equal both the sum of its ledger entries and what the answers said moved (money conserved), every
 * transfer's legs and every account's pending amounts must agree with the transfers, and no refusal while failing
 * closed applied anything.
 */
@EnabledIf(value = "serverBinariesInstalled", disabledReason = "needs PostgreSQL's initdb and redis-server (bash .ci/services)")
class CrashSafetyIT {
    private static final int KILL_ROUNDS = 20;
    private static final int FLUSH_ROUNDS = 4;
    private static final int RESTART_ROUNDS = 4;
    /** Rounds with DynamoDB as the store: SIGKILLs, then DynamoDB cut away for a moment under a burst. */
    private static final int DYNAMODB_KILL_ROUNDS = 6;
    private static final int DYNAMODB_CUT_ROUNDS = 2;
    private static final int ROUNDS = KILL_ROUNDS + FLUSH_ROUNDS + RESTART_ROUNDS + DYNAMODB_KILL_ROUNDS + DYNAMODB_CUT_ROUNDS;
    private static final int BURST = 40;
    private static final int ACCOUNTS = 4;
    private static final String API_KEY = "crash-safety-key-0123456789abcdef";

    private static PostgresServer postgres;
    private static RedisServer redis;
    /** The tests' dynalite ({@code tests.dynalite.port}, started by .ci/services), behind a proxy to cut. */
    private static TcpProxy dynamodb;
    /** Two instances: a kill round's burst goes to one and is cut by its death, its retries to the other. */
    private static final PackagedApp[] APPS = new PackagedApp[2];
    /** Each instance's restart under way since it was killed, or done. */
    private static final CompletableFuture<?>[] RESTARTS = {CompletableFuture.completedFuture(null),
            CompletableFuture.completedFuture(null)};
    private static final ScheduledExecutorService CHAOS = Executors.newSingleThreadScheduledExecutor();

    /** Created after the application started (JUnit constructs the test after {@code @BeforeAll}). */
    private final PaymentLoad load = new PaymentLoad("crash", new ApiClient("crash", API_KEY),
            List.of(URI.create(APPS[0].baseUrl()), URI.create(APPS[1].baseUrl())));
    private final Map<String, Payment> requests = new LinkedHashMap<>();
    private final Map<String, Answer> originals = new HashMap<>();
    private int crashes;
    private int retries;
    /** Requests whose first attempt got no final answer (cut by the crash, 503, or in progress). */
    private int interrupted;
    /** Keys refused with 503 while failing closed and not yet answered definitively: none may replay later. */
    private final Set<String> refusedFailingClosed = new HashSet<>();
    private int failClosedRefusals;
    /** Holds answered pending and not yet posted or voided by a request of a burst; transfers posted (not reversals). */
    private final List<String> holds = new ArrayList<>();
    private final List<String> posted = new ArrayList<>();
    /** Each account's last sequence given to a payment: a step of 1000, as transfers' legs take the next one too. */
    private final Map<String, Long> sequences = new HashMap<>();

    static boolean serverBinariesInstalled() {
        return PostgresServer.installed() && RedisServer.installed();
    }

    @BeforeAll
    static void startDedicatedServersAndTheApplication() throws Exception {
        postgres = new PostgresServer();
        try (Connection db = postgres.connect("postgres"); Statement sql = db.createStatement()) {
            sql.execute("CREATE DATABASE ledger");
        }
        redis = new RedisServer();
        dynamodb = new TcpProxy(Integer.getInteger("tests.dynalite.port", 18700));
        List<Callable<PackagedApp>> starts = new ArrayList<>();
        for (int i = 0; i < APPS.length; i++) {
            String log = "crash-safety-it-" + i + ".log";
            starts.add(() -> startInstance(log));
        }
        PackagedApp.startTogether(starts).toArray(APPS);
    }

    private static PackagedApp startInstance(String log) throws IOException {
        return PackagedApp.start(Map.of(
                    "QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + postgres.host() + "/ledger",
                    "QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://" + postgres.host() + "/ledger",
                    "QUARKUS_DATASOURCE_USERNAME", "postgres",
                    "QUARKUS_REDIS_HOSTS", redis.url(),
                    "LEDGER_API_KEYS", "crash:" + PackagedApp.sha256Hex(API_KEY),
                    // leases of crashed requests expire quickly, so that retries get through
                    "LEDGER_IDEMPOTENCY_LEASE", "2s",
                    // restarted after every SIGKILL: this test is about what is applied, not how fast a fresh start answers
                    "LEDGER_WARM_UP_ROUNDS", "0"), log);
    }

    @AfterAll
    static void stopEverything() throws Exception {
        CHAOS.shutdownNow();
        for (CompletableFuture<?> restart : RESTARTS) {
            restart.handle((ignored, failure) -> null).get(90, TimeUnit.SECONDS);
        }
        for (PackagedApp app : APPS) {
            if (app != null) {
                app.close();
            }
        }
        if (redis != null) {
            redis.close();
        }
        if (dynamodb != null) {
            dynamodb.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    /**
     * An answer that is final for the key (recorded for replay): not a 503, none, or 409 request-in-progress. A 400
     * would be final too, and then fail the replays at the end (it is not recorded): no request here is malformed.
     */
    private static boolean definitive(Answer answer) {
        int status = answer.status();
        return status >= 200 && status < 500 && !answer.type().equals("/problems/request-in-progress");
    }

    /** Remembers a key's first definitive answer; any later one must be the same answer, replayed. */
    private void observe(Payment request, Answer answer) {
        if (answer.status() == 422 && answer.type().equals("/problems/idempotency-key-reused")) {
            fail("key " + request.key() + " reported as reused: " + answer.body());
        }
        if (answer.status() == 500) {
            fail("500 for " + request.key() + ": " + answer.body());
        }
        // the refusal failing closed says so; a 503 for an unconfirmed statement says it may have been applied
        if (answer.status() == 503 && answer.body().contains("nothing was applied")) {
            failClosedRefusals += refusedFailingClosed.add(request.key()) ? 1 : 0;
        }
        if (!definitive(answer)) {
            return;
        }
        // refused failing closed before anything ran: the key's next definitive answer is its first execution
        assertFalse(refusedFailingClosed.remove(request.key()) && answer.isReplay() && !originals.containsKey(request.key()),
                "key " + request.key() + " was refused failing closed, yet applied: " + answer.body());
        Answer original = originals.putIfAbsent(request.key(), answer);
        if (original == null) {
            remember(request, answer);
        } else {
            assertEquals(original.status(), answer.status(), "key " + request.key() + " changed its answer");
            assertEquals(original.body(), answer.body(), "key " + request.key() + " changed its answer");
            assertTrue(answer.isReplay(), "key " + request.key() + " executed again instead of replaying");
        }
    }

    /** The holds and posted transfers a key's first final answer made, for the bursts to come to post, void or reverse. */
    private void remember(Payment request, Answer answer) {
        if (!request.path().startsWith("/transfers") || (answer.status() != 201 && answer.status() != 200)) {
            return;
        }
        JsonNode transfer = answer.json();
        String id = transfer.get("id").asText();
        if (answer.status() == 201 && transfer.get("status").asText().equals("pending")) {
            holds.add(id);
        } else if (transfer.get("status").asText().equals("posted") && transfer.get("reversalOf").isNull()) {
            posted.add(id);
        }
    }

    /**
     * A burst of the round: payments (a quarter of them debits), transfers between two of the accounts, holds,
     * posts (full or partial) and voids of holds made before, and reversals of transfers posted before.
     */
    private List<Payment> burst(Random random, List<String> accounts, int round) {
        List<Payment> burst = new ArrayList<>();
        for (int i = 0; i < BURST; i++) {
            String key = "crash-" + round + "-" + i + "-" + random.nextInt(1_000_000);
            String debit = accounts.get(random.nextInt(accounts.size()));
            String credit = accounts.get((accounts.indexOf(debit) + 1 + random.nextInt(accounts.size() - 1)) % accounts.size());
            long amount = 1 + random.nextInt(1_000);
            int roll = random.nextInt(100);
            Payment request;
            if (roll < 25) {
                request = PaymentLoad.request("/transfers", key, LedgerApi.transferBody(debit, credit, amount, ""));
            } else if (roll < 37) {
                request = PaymentLoad.request("/transfers", key,
                        LedgerApi.transferBody(debit, credit, amount, "\"pending\":true,\"timeoutSeconds\":600"));
            } else if (roll < 47 && !holds.isEmpty()) {
                String hold = holds.remove(random.nextInt(holds.size()));
                request = random.nextInt(3) == 0 ? PaymentLoad.request("/transfers/" + hold + "/void", key, "{}")
                        : PaymentLoad.request("/transfers/" + hold + "/post", key,
                        random.nextBoolean() ? "{}" : "{\"amount\":" + amount + "}");
            } else if (roll < 52 && !posted.isEmpty()) {
                request = PaymentLoad.request("/transfers/" + posted.get(random.nextInt(posted.size())) + "/reversals", key,
                        "{\"amount\":" + (1 + random.nextInt(300)) + "}");
            } else {
                boolean isDebit = random.nextInt(4) == 0;
                request = payment(debit, isDebit ? "DEBIT" : "CREDIT", isDebit ? 1 + random.nextInt(3_000) : amount, key);
            }
            requests.put(request.key(), request);
            burst.add(request);
        }
        return burst;
    }

    /** A payment on {@code account} with its next sequence. */
    private Payment payment(String account, String type, long amount, String key) {
        long sequence = sequences.merge(account, 1_000L, Long::sum);
        return PaymentLoad.request("/accounts/" + account + "/transactions", key, "{\"type\":\"" + type + "\",\"amount\":"
                + amount + ",\"sequence\":" + sequence + ",\"reference\":\"" + key + "\"}");
    }

    /**
     * Sends a burst to instance {@code target} while the chaos action strikes at a varying moment, then
     * retries every key to a final answer through instance {@code retryTo}, once it is up.
     */
    private void round(String chaosName, List<String> accounts, int round, Runnable chaos, int target, int retryTo)
            throws Exception {
        Random random = new Random(round);
        List<Payment> burst = burst(random, accounts, round);
        System.out.printf("[crash-safety] round %d of %d (%s): %d requests; so far %d keys, %d retries, %d crashes%n",
                round + 1, ROUNDS, chaosName, burst.size(), requests.size(), retries, crashes);
        ScheduledFuture<?> strike = CHAOS.schedule(chaos, random.nextInt(250), TimeUnit.MILLISECONDS);
        List<CompletableFuture<Answer>> answers = burst.stream().map(payment -> load.send(payment, target)).toList();
        CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        strike.get(120, TimeUnit.SECONDS);
        for (int i = 0; i < burst.size(); i++) {
            Answer first = answers.get(i).get();
            if (!definitive(first)) {
                interrupted++;
            }
            observe(burst.get(i), first);
        }
        RESTARTS[retryTo].get(90, TimeUnit.SECONDS);
        for (Payment request : burst) {
            AtomicReference<Answer> last = new AtomicReference<>();
            try {
                // no delay before the first attempt: most keys have their answer at once (awaitility waits a poll interval by default)
                await().atMost(Duration.ofSeconds(90)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100)).until(() -> {
                    retries++;
                    Answer answer = load.send(request, retryTo).get(30, TimeUnit.SECONDS);
                    last.set(answer);
                    observe(request, answer);
                    return definitive(answer);
                });
            } catch (ConditionTimeoutException e) {
                Answer answer = last.get();
                throw new AssertionError("key " + request.key() + " has no final answer after 90 s of retries; the last: "
                        + (answer == null ? "none" : answer.status() + " " + answer.body()), e);
            }
        }
    }

    @Test
    void everyKeyIsAppliedAtMostOnceThroughCrashesFlushesAndRestarts() throws Exception {
        List<String> accounts = load.openAccounts(ACCOUNTS);

        int round = killRounds("SIGKILL", accounts, 0, KILL_ROUNDS);
        for (int i = 0; i < FLUSH_ROUNDS; i++, round++) {
            round("Redis flush", accounts, round, CrashSafetyIT::flushRedis, i % 2, i % 2);
        }
        for (int i = 0; i < RESTART_ROUNDS; i++, round++) {
            round("Redis and Postgres restart", accounts, round, () -> {
                try {
                    redis.restart();
                    postgres.restart();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, i % 2, i % 2);
        }

        // The same instances with DynamoDB as the fast path, failing closed. The Redis rounds' keys are not in
        // its table: retried now, they reserve afresh and replay from Postgres.
        switchToDynamoDb();
        round = killRounds("SIGKILL, DynamoDB", accounts, round, DYNAMODB_KILL_ROUNDS);
        List<ScheduledFuture<?>> heals = new ArrayList<>();
        for (int i = 0; i < DYNAMODB_CUT_ROUNDS; i++, round++) {
            round("DynamoDB cut away", accounts, round, () -> {
                dynamodb.cut();
                heals.add(CHAOS.schedule(dynamodb::heal, 1, TimeUnit.SECONDS));
            }, i % 2, i % 2);
        }
        // a round's retries can end within the second its cut lasts: its heal must not land in the check below
        for (ScheduledFuture<?> heal : heals) {
            heal.get(30, TimeUnit.SECONDS);
        }
        theStoreUnreachableFailingClosedRefusesAndAppliesNothing(accounts.get(0));

        // Every key replays its original answer (from Postgres alone, but for the DynamoDB rounds' keys).
        flushRedis();
        int instance = 0;
        for (Payment request : requests.values()) {
            Answer replay = load.send(request, instance++ % 2).get(30, TimeUnit.SECONDS);
            assertTrue(replay.isReplay(), "no replay for " + request.key() + ": " + replay.body());
            observe(request, replay);
        }

        int doubleApplications = reconcile(accounts);
        String report = String.format("crash safety: %d rounds (%d SIGKILL, %d Redis flush, %d Redis+Postgres restart; "
                        + "with DynamoDB failing closed %d SIGKILL, %d DynamoDB cut), %d keys (%d of them transfers, holds, posts, "
                        + "voids or reversals), %d without a final first answer, %d retries, %d crashes, %d refused failing closed, "
                        + "applied %s, final answers by status %s, double applications: %d; money conserved: every balance is what "
                        + "the answers said moved, the accounts' total %d = credits less debits applied%n",
                round, KILL_ROUNDS, FLUSH_ROUNDS, RESTART_ROUNDS, DYNAMODB_KILL_ROUNDS, DYNAMODB_CUT_ROUNDS, requests.size(),
                requests.values().stream().filter(r -> r.path().startsWith("/transfers")).count(),
                interrupted, retries, crashes, failClosedRefusals, appliedByKind(), finalStatuses(), doubleApplications,
                total(accounts));
        Files.writeString(new File("target/crash-safety-report.txt").toPath(), report);
        System.out.print("[crash-safety] " + report);
        assertEquals(KILL_ROUNDS + DYNAMODB_KILL_ROUNDS, crashes);
        assertTrue(failClosedRefusals > 0, "the store unreachable, failing closed, refused: " + report);
        assertEquals(0, doubleApplications, report);
        // PostgreSQL's restarts made taking a pooled connection fail: nothing completes a statement twice then
        // (a Vert.x pool timer did, logged as "Result is already complete": Postgres says why no longer)
        for (PackagedApp app : APPS) {
            assertFalse(app.output().contains("Result is already complete"), "a promise was completed twice: see " + app.log());
        }
    }

    /**
     * {@code count} rounds from {@code first}, each killing the instance that serves its burst (alternately), its
     * keys retried through the other; answers the next round's number once both instances are up again.
     */
    private int killRounds(String chaosName, List<String> accounts, int first, int count) throws Exception {
        int round = first;
        for (int i = 0; i < count; i++, round++) {
            int victim = i % 2;
            // the victim of two rounds ago has restarted: it serves this burst and dies under it
            RESTARTS[victim].get(90, TimeUnit.SECONDS);
            round(chaosName, accounts, round, () -> {
                try {
                    APPS[victim].kill();
                    crashes++;
                    RESTARTS[victim] = CompletableFuture.runAsync(() -> {
                        try {
                            APPS[victim].restart();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, victim, 1 - victim);
        }
        for (CompletableFuture<?> restart : RESTARTS) {
            restart.get(90, TimeUnit.SECONDS);
        }
        return round;
    }

    /** Both instances stopped (SIGTERM) and started again on DynamoDB, failing closed, one after the other. */
    private static void switchToDynamoDb() throws Exception {
        Map<String, String> dynamo = new HashMap<>();
        dynamo.put("LEDGER_IDEMPOTENCY_STORE", "dynamodb");
        dynamo.put("LEDGER_IDEMPOTENCY_DYNAMODB_ENDPOINT", "http://127.0.0.1:" + dynamodb.port());
        dynamo.put("LEDGER_IDEMPOTENCY_DYNAMODB_TABLE", "crash-safety-" + UUID.randomUUID());
        // as the tests' DynamoDbProfile: dynalite is one Node.js thread on a busy machine
        dynamo.put("LEDGER_FAST_PATH_TIMEOUT", "2s");
        dynamo.put("LEDGER_FAST_PATH_FAIL_CLOSED", "true");
        dynamo.put("LEDGER_FAST_PATH_BREAKER_DELAY", "500ms");
        // dynalite takes any credentials
        dynamo.put("AWS_REGION", "us-east-1");
        dynamo.put("AWS_ACCESS_KEY_ID", "local");
        dynamo.put("AWS_SECRET_ACCESS_KEY", "local");
        for (PackagedApp app : APPS) {
            app.close();
            app.restart(dynamo);
        }
    }

    /**
     * DynamoDB unreachable, failing closed: a payment is refused with 503, {@code Retry-After} and nothing applied,
     * readiness is DOWN; once DynamoDB is back the same key executes (no replay: nothing had run).
     */
    private void theStoreUnreachableFailingClosedRefusesAndAppliesNothing(String account) throws Exception {
        Payment payment = payment(account, "CREDIT", 1, "crash-fail-closed-" + UUID.randomUUID());
        requests.put(payment.key(), payment);
        long balance = balance(account);
        dynamodb.cut();
        try {
            Answer refused = load.send(payment, 0).get(30, TimeUnit.SECONDS);
            assertEquals(503, refused.status(), refused.body());
            assertEquals("/problems/service-unavailable", refused.type(), refused.body());
            assertTrue(refused.retryAfter() != null, "Retry-After on the refusal");
            observe(payment, refused);
            await().atMost(Duration.ofSeconds(30)).until(() -> APPS[0].status("/q/health/ready") == 503);
            assertEquals(balance, balance(account), "nothing applied while refusing");
        } finally {
            dynamodb.heal();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> APPS[0].status("/q/health/ready") == 200);
        await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100)).until(() -> {
            Answer answer = load.send(payment, 0).get(30, TimeUnit.SECONDS);
            observe(payment, answer);
            return definitive(answer);
        });
        assertEquals(201, originals.get(payment.key()).status());
        assertFalse(originals.get(payment.key()).isReplay(), "executed once DynamoDB was back");
        assertEquals(balance + 1, balance(account));
    }

    private long balance(String account) throws Exception {
        try (Connection db = postgres.connect("ledger"); Statement sql = db.createStatement();
             ResultSet rows = sql.executeQuery("SELECT balance FROM accounts WHERE id = '" + account + "'")) {
            assertTrue(rows.next(), "account " + account);
            return rows.getLong(1);
        }
    }

    /**
     * Compares the database with the answers: counts the payments and transfers applied twice or applied without a
     * 201 for them; checks that each balance is what the answers said moved (money conserved) and that PostgreSQL
     * agrees with itself ({@link LedgerChecks}).
     */
    private int reconcile(List<String> accounts) throws Exception {
        Set<String> transactions = new HashSet<>();
        Set<String> transfers = new HashSet<>();
        Map<String, Long> expectedBalance = new HashMap<>();
        for (Map.Entry<String, Answer> entry : originals.entrySet()) {
            Answer answer = entry.getValue();
            if (answer.status() != 201 && answer.status() != 200) {
                continue;
            }
            JsonNode body = answer.json();
            if (requests.get(entry.getKey()).path().endsWith("/transactions")) {
                transactions.add(body.get("id").asText());
                long signed = ("DEBIT".equals(body.get("type").asText()) ? -1 : 1) * body.get("amount").asLong();
                expectedBalance.merge(body.get("accountId").asText(), signed, Long::sum);
                continue;
            }
            if (answer.status() == 201) {
                transfers.add(body.get("id").asText());
            }
            // what moved: a transfer made posted and a reversal (201), a hold's post (200); a hold or a void moves nothing
            if (body.get("status").asText().equals("posted")) {
                long moved = body.get("postedAmount").asLong();
                expectedBalance.merge(body.get("debitAccountId").asText(), -moved, Long::sum);
                expectedBalance.merge(body.get("creditAccountId").asText(), moved, Long::sum);
            }
        }
        assertEquals(requests.size(), originals.size(), "every key reached a definitive answer");
        int anomalies = 0;
        try (Connection db = postgres.connect("ledger"); Statement sql = db.createStatement()) {
            anomalies += unanswered(sql, "SELECT id FROM ledger_entries WHERE transfer_id IS NULL", transactions);
            anomalies += unanswered(sql, "SELECT id FROM transfers", transfers);
            for (String account : accounts) {
                try (ResultSet rows = sql.executeQuery("SELECT balance FROM accounts WHERE id = '" + account + "'")) {
                    assertTrue(rows.next());
                    assertEquals(expectedBalance.getOrDefault(account, 0L), rows.getLong("balance"),
                            "balance = what the answers said moved");
                }
            }
            assertEquals(List.of(), LedgerChecks.disagreements(db, accounts));
        }
        return anomalies;
    }

    /** Keys applied (a first 200 or 201), by what they asked for. */
    private Map<String, Long> appliedByKind() {
        Map<String, Long> counts = new TreeMap<>();
        originals.forEach((key, answer) -> {
            if (answer.status() == 200 || answer.status() == 201) {
                String path = requests.get(key).path();
                String kind = path.endsWith("/transactions") ? answer.json().get("type").asText().toLowerCase()
                        : path.equals("/transfers") ? (answer.json().get("expiresAt").isNull() ? "transfer" : "hold")
                        : path.substring(path.lastIndexOf('/') + 1);
                counts.merge(kind, 1L, Long::sum);
            }
        });
        return counts;
    }

    /** Each key's final answer, by status. */
    private Map<Integer, Long> finalStatuses() {
        Map<Integer, Long> counts = new TreeMap<>();
        originals.values().forEach(answer -> counts.merge(answer.status(), 1L, Long::sum));
        return counts;
    }

    /** The accounts' balances added up, asserted equal to the credits less the debits applied: transfers move, never make. */
    private long total(List<String> accounts) throws Exception {
        long applied = originals.entrySet().stream()
                .filter(e -> e.getValue().status() == 201 && requests.get(e.getKey()).path().endsWith("/transactions"))
                .mapToLong(e -> ("DEBIT".equals(e.getValue().json().get("type").asText()) ? -1 : 1)
                        * e.getValue().json().get("amount").asLong()).sum();
        long total = 0;
        for (String account : accounts) {
            total += balance(account);
        }
        assertEquals(applied, total, "the accounts' total = credits less debits applied");
        return total;
    }

    /** The rows {@code query} finds that no answer told a client of, and the answered ones it does not find. */
    private static int unanswered(Statement sql, String query, Set<String> answered) throws Exception {
        int anomalies = 0;
        int rows = 0;
        try (ResultSet found = sql.executeQuery(query)) {
            while (found.next()) {
                rows++;
                anomalies += answered.contains(found.getString(1)) ? 0 : 1;
            }
        }
        return anomalies + Math.abs(answered.size() - rows);
    }

    private static void flushRedis() {
        try {
            Process flush = new ProcessBuilder("redis-cli", "-p", Integer.toString(redis.port()), "FLUSHALL")
                    .redirectErrorStream(true).start();
            flush.getInputStream().readAllBytes();
            assertTrue(flush.waitFor(30, TimeUnit.SECONDS) && flush.exitValue() == 0, "FLUSHALL failed");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
