package dev.ledger.commands.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.AccountLock;
import dev.ledger.testing.AsyncApiContract;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.KafkaBroker;
import dev.ledger.testing.LedgerApi;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.Outcomes;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payment commands over Kafka, against a real broker ({@link KafkaBroker}): the same engine as the HTTP
 * POSTs and the RabbitMQ commands, every outcome class, dead letters with their reasons, the order of
 * one account's commands, a client's topic created while the service runs.
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class KafkaCommandsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static KafkaProducer<byte[], byte[]> producer;

    @Inject
    Redis redis;

    @BeforeAll
    static void connect() {
        producer = KafkaBroker.producer();
    }

    @AfterAll
    static void disconnect() {
        producer.close(Duration.ofSeconds(5));
    }

    private static String command(String account, String type, long amount, long sequence) {
        return "{\"accountId\":\"" + account + "\",\"type\":\"" + type + "\",\"amount\":" + amount + ",\"sequence\":" + sequence + "}";
    }

    private static void send(ProducerRecord<byte[], byte[]> record) throws Exception {
        producer.send(record).get(20, TimeUnit.SECONDS);
    }

    private static void send(String account, String key, String body) throws Exception {
        send(KafkaBroker.command("dev", account, body, "idempotency-key", key, "correlation-id", "corr-" + key));
    }

    private static java.util.function.Predicate<KafkaBroker.Received> keyed(String key) {
        return received -> key.equals(received.header("idempotency-key"));
    }

    @Test
    void appliesACommandAndPublishesItsOutcomeKeyedByAccount() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            String body = command(account, "CREDIT", 1250, 1);
            // the command the service applies is one the AsyncAPI document describes (its outcome is checked as received)
            AsyncApiContract.kafka("kafkaPaymentCommand", account, Map.of("idempotency-key", key, "correlation-id", "corr-" + key),
                    body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            send(account, key, body);

            KafkaBroker.Received outcome = outcomes.await(1, keyed(key), BOUND).get(0);
            assertEquals(201, outcome.status());
            assertEquals(account, outcome.key(), "keyed by the account, so one account's outcomes stay in order");
            assertEquals("application/json", outcome.header("content-type"));
            assertEquals("corr-" + key, outcome.header("correlation-id"));
            assertNull(outcome.header("idempotent-replayed"));
            JsonNode transaction = JSON.readTree(outcome.value());
            assertEquals(1250, transaction.get("balanceAfter").asLong());
            // exactly the body the HTTP API answers for that transaction
            Response read = LedgerApi.given().get("/accounts/" + account + "/transactions/" + transaction.get("id").asText());
            assertEquals(JSON.readTree(read.asString()), transaction);
            assertEquals(1250, LedgerApi.balance(account));
        }
    }

    @Test
    void theSameCommandProducedFiftyTimesIsAppliedOnceAndAnsweredFiftyTimes() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        Outcomes kafka = Outcomes.since("kafka");
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            for (int i = 0; i < 50; i++) {
                producer.send(KafkaBroker.command("dev", account, command(account, "CREDIT", 700, 1), "idempotency-key", key));
            }
            producer.flush();
            List<KafkaBroker.Received> answers = outcomes.await(50, keyed(key), BOUND);
            long replayed = answers.stream().filter(a -> "true".equals(a.header("idempotent-replayed"))).count();
            Set<String> bodies = new HashSet<>();
            answers.forEach(a -> bodies.add(a.value()));
            int applied = LedgerApi.entryCount(account);
            System.out.printf("[kafka-duplicates] commands sent 50, applied %d, double applications %d, outcomes %d"
                    + " (201: %d, replayed %d)%n", applied, applied - 1, answers.size(),
                    answers.stream().filter(a -> a.status() == 201).count(), replayed);
            assertEquals(1, applied);
            assertEquals(700, LedgerApi.balance(account));
            assertTrue(answers.stream().allMatch(a -> a.status() == 201));
            assertEquals(49, replayed);
            assertEquals(1, bodies.size(), "every outcome is the same transaction, byte for byte");
            // one account's commands run one at a time in its lane: the copies find the key completed
            kafka.assertChanged(Map.of("executed", 1.0, "replayed-store", 49.0));
        }
    }

    @Test
    void oneAccountsCommandsAreAppliedInTheirOrder() throws Exception {
        String account = LedgerApi.newAccount();
        List<String> keys = new ArrayList<>();
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            for (int sequence = 1; sequence <= 40; sequence++) {
                String key = LedgerApi.newKey();
                keys.add(key);
                // one after the other in the partition; handled one at a time, none overtakes another
                producer.send(KafkaBroker.command("dev", account, command(account, "CREDIT", 10, sequence), "idempotency-key", key));
            }
            producer.flush();
            List<KafkaBroker.Received> answers = outcomes.await(40, received -> keys.contains(received.header("idempotency-key")), BOUND);
            long stale = answers.stream().filter(a -> a.status() == 409).count();
            System.out.printf("[kafka-order] 40 commands of one account: %d applied, %d stale%n",
                    answers.stream().filter(a -> a.status() == 201).count(), stale);
            assertEquals(0, stale, "a later command overtook an earlier one");
            assertEquals(40, LedgerApi.entryCount(account));
            assertEquals(40, LedgerApi.lastSequence(account));
        }
    }

    @Test
    void unreadableRecordsAreDeadLetteredWithTheirReasonAndTheGoodOnesAroundThemApplied() throws Exception {
        String account = LedgerApi.newAccount();
        String other = UUID.randomUUID().toString();
        String good1 = LedgerApi.newKey();
        String good2 = LedgerApi.newKey();
        // every unreadable record names its own correlation-id: its refusal must carry it, whatever is wrong with it
        String run = LedgerApi.newKey();
        Map<String, ProducerRecord<byte[], byte[]>> poison = new java.util.LinkedHashMap<>();
        poison.put("invalid-request", KafkaBroker.command("dev", account, "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\"}",
                "idempotency-key", LedgerApi.newKey(), "correlation-id", run + "-body"));
        poison.put("idempotency-key-missing", KafkaBroker.command("dev", account, command(account, "CREDIT", 1, 5),
                "correlation-id", run + "-missing"));
        poison.put("idempotency-key-invalid", KafkaBroker.command("dev", account, command(account, "CREDIT", 1, 5),
                "idempotency-key", "has space", "correlation-id", run + "-invalid"));
        String mismatch = LedgerApi.newKey();
        ProducerRecord<byte[], byte[]> keyMismatch = KafkaBroker.command("dev", other, command(account, "CREDIT", 1, 5),
                "idempotency-key", mismatch, "correlation-id", run + "-mismatch");
        String notJson = LedgerApi.newKey();
        ProducerRecord<byte[], byte[]> textPlain = KafkaBroker.command("dev", account, command(account, "CREDIT", 1, 5),
                "idempotency-key", notJson, "content-type", "text/plain", "correlation-id", run + "-text");
        try (KafkaBroker.Reader dead = KafkaBroker.reader("ledger.dead.commands");
             KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            send(account, good1, command(account, "CREDIT", 100, 1));
            for (ProducerRecord<byte[], byte[]> record : poison.values()) {
                send(record);
            }
            send(keyMismatch);
            send(textPlain);
            send(account, good2, command(account, "CREDIT", 100, 2));

            outcomes.await(1, keyed(good2), BOUND);
            List<KafkaBroker.Received> letters = dead.await(poison.size() + 2,
                    letter -> letter.key() != null && (letter.key().equals(account) || letter.key().equals(other)), BOUND);
            Set<String> reasons = new HashSet<>();
            letters.forEach(letter -> reasons.add(letter.header("x-ledger-problem")));
            assertTrue(reasons.containsAll(poison.keySet()), reasons.toString());
            assertTrue(letters.stream().allMatch(letter -> "dev".equals(letter.header("x-ledger-client"))));
            assertEquals(2, letters.stream().filter(letter -> "invalid-request".equals(letter.header("x-ledger-problem"))
                    && (mismatch.equals(letter.header("idempotency-key")) || notJson.equals(letter.header("idempotency-key")))
                    ).count(), "a record key that is not the accountId, and a content-type that is not JSON");
            List<KafkaBroker.Received> refusals = outcomes.await(poison.size() + 2, received -> received.header("correlation-id") != null
                    && received.header("correlation-id").startsWith(run + "-"), BOUND);
            assertEquals(Set.of(run + "-body", run + "-missing", run + "-invalid", run + "-mismatch", run + "-text"),
                    refusals.stream().map(refusal -> refusal.header("correlation-id")).collect(java.util.stream.Collectors.toSet()),
                    "every refusal carries its own record's correlation-id");
            assertTrue(refusals.stream().allMatch(refusal -> refusal.status() == 400
                    && "application/problem+json".equals(refusal.header("content-type"))));
            System.out.printf("[kafka-poison] %d good, %d unreadable: dead-lettered %d with their reasons %s, applied %d%n",
                    2, poison.size() + 2, letters.size(), reasons, LedgerApi.entryCount(account));
            assertEquals(2, LedgerApi.entryCount(account), "only the good ones applied; the offset moved past the others");
        }
    }

    @Test
    void aRecordOnTheTopicOfAClientThatIsNotConfiguredIsDeadLetteredUnauthorized() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        try (KafkaBroker.Reader dead = KafkaBroker.reader("ledger.dead.commands");
             KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.stranger")) {
            send(KafkaBroker.command("stranger", account, command(account, "CREDIT", 5, 1), "idempotency-key", key));
            KafkaBroker.Received letter = dead.await(1, keyed(key), BOUND).get(0);
            assertEquals("unauthorized", letter.header("x-ledger-problem"));
            assertEquals("stranger", letter.header("x-ledger-client"));
            assertEquals(0, LedgerApi.entryCount(account));
            assertTrue(outcomes.drain(keyed(key), Duration.ofSeconds(2)).isEmpty(), "no outcome for an unknown client");
        }
    }

    @Test
    void aClientsTopicCreatedWhileTheServiceRunsIsReadFromItsFirstRecord() throws Exception {
        String topic = "ledger.commands.other";
        try (Admin admin = KafkaBroker.admin()) {
            if (admin.listTopics().names().get(20, TimeUnit.SECONDS).contains(topic)) {
                admin.deleteTopics(List.of(topic)).all().get(20, TimeUnit.SECONDS);
                await(() -> !admin.listTopics().names().get(20, TimeUnit.SECONDS).contains(topic));
            }
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(20, TimeUnit.SECONDS);
        }
        String account = dev.ledger.testing.ApiClient.OTHER.newAccount();
        String key = LedgerApi.newKey();
        long start = System.nanoTime();
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.other")) {
            send(KafkaBroker.command("other", account, command(account, "CREDIT", 5, 1), "idempotency-key", key));
            KafkaBroker.Received outcome = outcomes.await(1, keyed(key), BOUND).get(0);
            System.out.printf("[kafka-new-topic] a new client's topic found and its first record answered in %d ms%n",
                    (System.nanoTime() - start) / 1_000_000);
            assertEquals(201, outcome.status());
        }
    }

    @Test
    void oneKeyIsOneKeyAcrossHttpAndKafka() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        Response http = LedgerApi.postTransaction(account, key, transaction("CREDIT", 300, 1));
        assertEquals(201, http.statusCode());
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            send(account, key, command(account, "CREDIT", 300, 1));
            KafkaBroker.Received replay = outcomes.await(1, keyed(key), BOUND).get(0);
            assertEquals("true", replay.header("idempotent-replayed"));
            assertEquals(JSON.readTree(http.asString()), JSON.readTree(replay.value()));

            String reused = LedgerApi.newKey();
            assertEquals(201, LedgerApi.postTransaction(account, reused, transaction("CREDIT", 1, 2)).statusCode());
            send(account, reused, command(account, "CREDIT", 2, 2));
            KafkaBroker.Received refusal = outcomes.await(1, keyed(reused), BOUND).get(0);
            assertEquals(422, refusal.status());
            assertTrue(refusal.value().contains("idempotency-key-reused"), refusal.value());
        }
        assertEquals(301, LedgerApi.balance(account));
    }

    /**
     * A copy whose original is still in flight (as after a rebalance, when the partition's old owner still
     * works on it; here the original is an HTTP POST held by a row lock on its account) waits for it and
     * produces its outcome as a replay: applied once, no 409, no retry loop.
     */
    @Test
    void aCopyWhoseOriginalIsInFlightWaitsForItAndProducesItsOutcome() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        CompletableFuture<HttpResponse<String>> original;
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            double waitingBefore = metric("ledger_idempotency_waiting");
            try (AccountLock lock = AccountLock.hold(account)) {
                original = LedgerApi.postTransactionAsync(account, key, transaction("CREDIT", 400, 1), null);
                await(() -> lock.waiters() == 1);
                send(account, key, command(account, "CREDIT", 400, 1));
                // the copy waits for the original (the gauge of waiting requests), nothing is produced yet
                await(() -> metric("ledger_idempotency_waiting") >= waitingBefore + 1);
                assertTrue(outcomes.drain(keyed(key), Duration.ofMillis(500)).isEmpty(), "no outcome while the original runs");
            }
            HttpResponse<String> applied = original.get(30, TimeUnit.SECONDS);
            assertEquals(201, applied.statusCode(), applied.body());
            KafkaBroker.Received outcome = outcomes.await(1, keyed(key), BOUND).get(0);
            assertEquals(201, outcome.status());
            assertEquals("true", outcome.header("idempotent-replayed"));
            assertEquals(JSON.readTree(applied.body()), JSON.readTree(outcome.value()));
            System.out.printf("[kafka-in-flight] 1 HTTP original held in flight, 1 Kafka copy: outcomes %d (status %d, replayed),"
                    + " applied %d, double applications %d%n", outcomes.drain(keyed(key), Duration.ofMillis(200)).size(),
                    outcome.status(), LedgerApi.entryCount(account), LedgerApi.entryCount(account) - 1);
        }
        assertEquals(400, LedgerApi.balance(account));
        assertEquals(1, LedgerApi.entryCount(account));
    }

    private static double metric(String series) {
        return Metrics.value(RestAssured.get("/q/metrics").asString(), series).orElse(0);
    }

    @Test
    void aCommandRedisForgotReplaysFromPostgres() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            send(account, key, command(account, "DEBIT", 5, 1));
            KafkaBroker.Received first = outcomes.await(1, keyed(key), BOUND).get(0);
            assertEquals(422, first.status(), "insufficient funds, recorded");
            redis.send(Request.cmd(Command.FLUSHDB)).await().atMost(Duration.ofSeconds(10));
            send(account, key, command(account, "DEBIT", 5, 1));
            KafkaBroker.Received again = outcomes.await(2, keyed(key), BOUND).get(1);
            assertEquals("true", again.header("idempotent-replayed"));
            assertEquals(first.value(), again.value());
        }
        String metrics = RestAssured.get("/q/metrics").asString();
        assertTrue(Metrics.value(metrics, "ledger_commands_total{outcome=\"replayed\",problem=\"none\",transport=\"kafka\"}")
                .orElse(0) >= 1, "outcomes counted by transport");
    }

    @Test
    void readinessIncludesTheBrokerAndMetricsShowTheLagOfEveryPartition() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            send(account, key, command(account, "CREDIT", 1, 1));
            outcomes.await(1, keyed(key), BOUND);
        }
        RestAssured.get("/q/health/ready").then().statusCode(200)
                .body(org.hamcrest.Matchers.containsString("kafka-commands"));
        await(() -> RestAssured.get("/q/metrics").asString().lines().anyMatch(line ->
                line.startsWith("ledger_commands_lag{") && line.contains("topic=\"ledger.commands.dev\"")
                        && line.contains("partition=")));
    }

    private static void await(java.util.concurrent.Callable<Boolean> condition) {
        org.awaitility.Awaitility.await().atMost(BOUND).until(condition);
    }
}
