package dev.ledger.commands.rabbitmq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.AccountLock;
import dev.ledger.testing.AsyncApiContract;
import dev.ledger.testing.Broker;
import dev.ledger.testing.BrokerUsers;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.LedgerApi;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.Outcomes;
import dev.ledger.testing.Sql;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.ledger.testing.LedgerApi.transaction;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payment commands over RabbitMQ, against the real broker (API.md "Payment commands over RabbitMQ"):
 * the same engine as the HTTP POSTs, every outcome class, the dead-letter queue with its reasons.
 * Commands are published as a client does: as the broker user named like the client ({@code dev}),
 * with publisher confirms.
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class CommandsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(20);
    @Inject
    Redis redis;
    private static Broker dev;
    private static Broker guest;
    private String replies;
    private String outcomes;

    @BeforeAll
    static void connect() throws Exception {
        BrokerUsers.ensure("dev");
        BrokerUsers.ensure("stranger");
        dev = Broker.as("dev", BrokerUsers.PASSWORD, 0);
        guest = Broker.asGuest();
    }

    @AfterAll
    static void disconnect() throws Exception {
        dev.close();
        guest.close();
    }

    @BeforeEach
    void queues() throws Exception {
        replies = dev.replyQueue();
        outcomes = dev.outcomeQueue();
        guest.purge(Broker.DEAD);
    }

    private static String command(String account, String type, long amount, long sequence) {
        return "{\"accountId\":\"" + account + "\",\"type\":\"" + type + "\",\"amount\":" + amount + ",\"sequence\":" + sequence + "}";
    }

    private void send(String key, String body) throws Exception {
        dev.publish(Broker.command(key, "dev", replies).correlationId("corr-" + key).build(), body);
    }

    /**
     * RabbitMQ 4 gives quorum queues a delivery limit of 20 when none is declared, past which the broker
     * dead-letters a command by itself (no x-ledger-problem), as a long outage would make it; the queue
     * carries its own, so the behaviour is the same on every version.
     */
    @Test
    void theCommandsQueueIsDeclaredWithAnExplicitDeliveryLimit() throws Exception {
        JsonNode queues = JSON.readTree(BrokerUsers.ctl(null, "list_queues", "-p", Broker.virtualHost(), "name", "arguments",
                "--formatter", "json"));
        JsonNode arguments = null;
        for (JsonNode queue : queues) {
            if (Broker.COMMANDS.equals(queue.path("name").asText())) {
                arguments = queue.path("arguments");
            }
        }
        assertTrue(arguments != null, "queue " + Broker.COMMANDS + " declared: " + queues);
        Map<String, String> declared = new java.util.HashMap<>();
        arguments.forEach(argument -> declared.put(argument.get(0).asText(), argument.get(2).asText()));
        assertEquals("quorum", declared.get("x-queue-type"), declared.toString());
        assertEquals("1000000", declared.get("x-delivery-limit"), declared.toString());
    }

    @Test
    void appliesACommandAndPublishesItsOutcomeBeforeAcknowledging() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = command(account, "CREDIT", 1250, 1);
        // the command the service applies is one the AsyncAPI document describes (its outcome is checked as taken)
        AsyncApiContract.rabbitmq("rabbitmqPaymentCommand", Broker.command(key, "dev", replies).correlationId("corr-" + key).build(),
                body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        send(key, body);

        Broker.Delivery reply = dev.next(replies, BOUND);
        assertEquals(201, reply.status());
        assertEquals("application/json", reply.properties().getContentType());
        assertEquals("corr-" + key, reply.properties().getCorrelationId());
        assertEquals(key, reply.header("idempotency-key"));
        assertNull(reply.header("idempotent-replayed"));
        JsonNode transaction = JSON.readTree(reply.body());
        assertEquals(1250, transaction.get("balanceAfter").asLong());
        // exactly the body the HTTP API answers for that transaction
        Response read = LedgerApi.given().get("/accounts/" + account + "/transactions/" + transaction.get("id").asText());
        assertEquals(read.asString(), reply.body());
        Broker.Delivery published = dev.next(outcomes, BOUND);
        assertEquals("transactions.201", published.routingKey());
        assertEquals(reply.body(), published.body());
        assertEquals(1250, LedgerApi.balance(account));
        await().atMost(BOUND).until(() -> guest.depth(Broker.COMMANDS) == 0);
    }

    /**
     * A channel the broker closes (here: a publish to the outcome exchange, deleted under the service) takes its
     * connection with it; the publisher connects again, declares the exchange again, and the command, given back
     * after its failed publish, is answered as a replay. One connection of the outcomes' remains, not a live one with a
     * dead channel beside the new one.
     */
    @Test
    void aChannelTheBrokerClosedIsReplacedWithItsConnection() throws Exception {
        guest.channel().exchangeDelete(Broker.OUTCOMES);
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        send(key, command(account, "CREDIT", 70, 1));

        Broker.Delivery reply = dev.next(replies, BOUND);
        assertEquals(201, reply.status(), reply.body());
        assertEquals(70, LedgerApi.balance(account), "applied once");
        guest.channel().exchangeDeclarePassive(Broker.OUTCOMES);
        await().atMost(BOUND).until(() -> BrokerUsers.ctl(null, "list_connections", "-p", Broker.virtualHost(), "client_properties")
                .lines().filter(connection -> connection.contains("ledger-outcomes")).count() == 1);
        await().atMost(BOUND).until(() -> guest.depth(Broker.COMMANDS) == 0);
    }

    @Test
    void aRedeliveredOrRepeatedCommandIsAReplayAndAppliesNothing() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = command(account, "CREDIT", 500, 1);
        Outcomes rabbitmq = Outcomes.since("rabbitmq");
        send(key, body);
        Broker.Delivery first = dev.next(replies, BOUND);
        send(key, body);
        Broker.Delivery second = dev.next(replies, BOUND);
        assertEquals(201, second.status());
        assertEquals(true, second.header("idempotent-replayed"));
        assertEquals(first.body(), second.body());
        assertEquals(1, LedgerApi.entryCount(account));
        rabbitmq.assertChanged(Map.of("executed", 1.0, "replayed-store", 1.0));
    }

    /** The store forgets every key: the tests' own Redis database, as a restart, failover or flush would leave it. */
    void flushStore() {
        redis.send(Request.cmd(Command.FLUSHDB)).await().atMost(BOUND);
    }

    @Test
    void aCommandRepeatedAfterRedisLostItsDataReplaysFromPostgres() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = command(account, "CREDIT", 900, 1);
        Outcomes rabbitmq = Outcomes.since("rabbitmq");
        send(key, body);
        Broker.Delivery first = dev.next(replies, BOUND);
        flushStore();
        send(key, body);
        Broker.Delivery second = dev.next(replies, BOUND);
        assertEquals(first.body(), second.body());
        assertEquals(true, second.header("idempotent-replayed"));
        assertEquals(1, LedgerApi.entryCount(account));
        rabbitmq.assertChanged(Map.of("executed", 1.0, "replayed-postgres", 1.0));
    }

    @Test
    void countsCommandsByOutcomeAndShowsTheQueuesDepth() throws Exception {
        String account = LedgerApi.newAccount();
        double applied = metric("ledger_commands_total{outcome=\"applied\",problem=\"none\",transport=\"rabbitmq\"}");
        double replayed = metric("ledger_commands_total{outcome=\"replayed\",problem=\"none\",transport=\"rabbitmq\"}");
        String key = LedgerApi.newKey();
        send(key, command(account, "CREDIT", 1, 1));
        dev.next(replies, BOUND);
        send(key, command(account, "CREDIT", 1, 1));
        dev.next(replies, BOUND);
        // counted once the outcome is confirmed and the command acknowledged, just after the reply arrives
        await().atMost(BOUND).until(() -> metric("ledger_commands_total{outcome=\"applied\",problem=\"none\",transport=\"rabbitmq\"}") == applied + 1
                && metric("ledger_commands_total{outcome=\"replayed\",problem=\"none\",transport=\"rabbitmq\"}") == replayed + 1);
        await().atMost(BOUND).until(() -> metric("ledger_commands_queued") == 0);
    }

    @Test
    void aKeyIsOneKeyOverHttpAndTheBroker() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        Response http = LedgerApi.postTransaction(account, key, transaction("CREDIT", 700, 1));
        assertEquals(201, http.statusCode());
        Outcomes rabbitmq = Outcomes.since("rabbitmq");

        send(key, command(account, "CREDIT", 700, 1));
        Broker.Delivery replay = dev.next(replies, BOUND);
        assertEquals(201, replay.status());
        assertEquals(true, replay.header("idempotent-replayed"));
        assertEquals(http.asString(), replay.body());

        send(key, command(account, "CREDIT", 701, 1));
        Broker.Delivery reused = dev.next(replies, BOUND);
        assertEquals(422, reused.status());
        assertEquals("application/problem+json", reused.properties().getContentType());
        assertEquals("/problems/idempotency-key-reused", JSON.readTree(reused.body()).get("type").asText());
        rabbitmq.assertChanged(Map.of("replayed-store", 1.0, "key-reused", 1.0));

        // and the other way round: a command first, then the same request over HTTP
        String commandKey = LedgerApi.newKey();
        send(commandKey, command(account, "DEBIT", 200, 2));
        Broker.Delivery debited = dev.next(replies, BOUND);
        Response again = LedgerApi.postTransaction(account, commandKey, transaction("DEBIT", 200, 2));
        assertEquals(201, again.statusCode());
        assertEquals("true", again.header("Idempotent-Replayed"));
        assertEquals(debited.body(), again.asString());
        assertEquals(500, LedgerApi.balance(account));
        assertEquals(2, LedgerApi.entryCount(account));
    }

    @Test
    void businessRefusalsAreRecordedPublishedAndReplayed() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        send(key, command(account, "DEBIT", 100, 1));
        Broker.Delivery refused = dev.next(replies, BOUND);
        assertEquals(422, refused.status());
        assertEquals(0, JSON.readTree(refused.body()).get("balance").asLong());
        assertEquals("transactions.422", dev.next(outcomes, BOUND).routingKey());
        LedgerApi.credit(account, 1000, 1);
        send(key, command(account, "DEBIT", 100, 1));
        Broker.Delivery replayed = dev.next(replies, BOUND);
        assertEquals(refused.body(), replayed.body());
        assertEquals(true, replayed.header("idempotent-replayed"));
        assertEquals(1000, LedgerApi.balance(account));
    }

    @Test
    void invalidCommandsAreDeadLetteredWithTheirReasonAndAnswered() throws Exception {
        String account = LedgerApi.newAccount();
        record Case(String slug, String key, String contentType, String body) {
        }
        List<Case> cases = List.of(
                new Case("invalid-request", LedgerApi.newKey(), "application/json", "{\"accountId\":\"" + account + "\""),
                new Case("invalid-request", LedgerApi.newKey(), "application/json",
                        "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"ammount\":1,\"sequence\":1}"),
                new Case("invalid-request", LedgerApi.newKey(), "application/json",
                        "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":1.5,\"sequence\":1}"),
                new Case("invalid-request", LedgerApi.newKey(), "application/json", command("not-a-uuid", "CREDIT", 1, 1)),
                new Case("invalid-request", LedgerApi.newKey(), "text/plain", command(account, "CREDIT", 1, 1)),
                new Case("idempotency-key-missing", null, "application/json", command(account, "CREDIT", 1, 1)),
                new Case("idempotency-key-invalid", "has space", "application/json", command(account, "CREDIT", 1, 1)),
                new Case("idempotency-key-invalid", "\"quoted\"", "application/json", command(account, "CREDIT", 1, 1)));
        for (Case c : cases) {
            dev.publish(Broker.command(c.key, "dev", replies).contentType(c.contentType).build(), c.body);
            Broker.Delivery answer = dev.next(replies, BOUND);
            assertEquals(400, answer.status(), c.toString());
            assertEquals("/problems/" + c.slug, JSON.readTree(answer.body()).get("type").asText(), c.toString());
            Broker.Delivery dead = deadLetterOf(c.body);
            assertEquals(c.slug, dead.header("x-ledger-problem"), c.toString());
            assertEquals(c.body, dead.body());
            assertEquals("dev", dead.header("x-ledger-user-id"));
        }
        assertEquals(0, LedgerApi.entryCount(account));
        assertTrue(dev.drain(outcomes).isEmpty(), "an unreadable command publishes no outcome");
        System.out.printf("Invalid commands: %d sent, %d dead-lettered with their reason, 0 applied%n", cases.size(), cases.size());
    }

    @Test
    void commandsFromUnknownSendersAreDeadLetteredUnanswered() throws Exception {
        String account = LedgerApi.newAccount();
        // no user_id: anyone may publish so
        guest.publish(new com.rabbitmq.client.AMQP.BasicProperties.Builder().contentType("application/json")
                .messageId(LedgerApi.newKey()).replyTo(replies).build(), command(account, "CREDIT", 5, 1));
        assertEquals("unauthorized", deadLetterOf(command(account, "CREDIT", 5, 1)).header("x-ledger-problem"));
        // a broker user that is no client of the service
        try (Broker stranger = Broker.as("stranger", BrokerUsers.PASSWORD, 0)) {
            stranger.publish(Broker.command(LedgerApi.newKey(), "stranger", replies).build(), command(account, "CREDIT", 6, 1));
        }
        Broker.Delivery dead = deadLetterOf(command(account, "CREDIT", 6, 1));
        assertEquals("unauthorized", dead.header("x-ledger-problem"));
        assertTrue(dev.drain(replies).isEmpty(), "no answer to a sender that is no client");
        assertEquals(0, LedgerApi.entryCount(account));
    }

    @Test
    void fiftyCopiesOfOneCommandAtOnceApplyOnce() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = command(account, "CREDIT", 42, 1);
        for (int i = 0; i < 50; i++) {
            send(key, body);
        }
        List<Broker.Delivery> answers = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            answers.add(dev.next(replies, BOUND));
        }
        Set<String> bodies = new HashSet<>();
        int originals = 0;
        for (Broker.Delivery answer : answers) {
            assertEquals(201, answer.status());
            bodies.add(answer.body());
            originals += answer.replayed() ? 0 : 1;
        }
        int entries = LedgerApi.entryCount(account);
        System.out.printf("50 copies of one command: %d outcomes, %d original, %d replays, applied %d, double applications %d%n",
                answers.size(), originals, answers.size() - originals, entries, entries - 1);
        assertEquals(1, originals);
        assertEquals(1, bodies.size());
        assertEquals(1, entries);
        assertEquals(42, LedgerApi.balance(account));
    }

    @Test
    void aCopyOfAnInFlightCommandWaitsForItsOutcome() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = command(account, "CREDIT", 300, 1);
        Outcomes rabbitmq = Outcomes.since("rabbitmq");
        try (AccountLock lock = AccountLock.hold(account)) {
            send(key, body);
            await().atMost(BOUND).until(() -> lock.waiters() == 1);
            send(key, body);
            // the copy neither applies nor comes back: nothing is answered while the original runs
            await().atMost(BOUND).until(() -> metric("ledger_idempotency_waiting") == 1);
            assertTrue(dev.drain(replies).isEmpty());
        }
        Broker.Delivery a = dev.next(replies, BOUND);
        Broker.Delivery b = dev.next(replies, BOUND);
        assertEquals(a.body(), b.body());
        assertEquals(1, (a.replayed() ? 1 : 0) + (b.replayed() ? 1 : 0), "one original, one replay");
        assertEquals(1, LedgerApi.entryCount(account));
        rabbitmq.assertChanged(Map.of("executed", 1.0, "waited-replayed", 1.0));
    }

    @Test
    void aCommandThatKeepsFailingIsDeadLetteredAfterMaxDeliveries() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String poison = "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":9,\"sequence\":1,\"reference\":\"poison\"}";
        // a fault that is no dependency's: the ledger refuses this one row (as a bad deployment could)
        Sql.execute("ALTER TABLE ledger_entries ADD CONSTRAINT tests_poison CHECK (reference IS DISTINCT FROM 'poison')");
        try {
            send(key, poison);
            Broker.Delivery dead = deadLetterOf(poison);
            assertEquals("internal-error", dead.header("x-ledger-problem"));
            assertEquals(poison, dead.body());
            assertEquals(4L, ((Number) dead.header("x-delivery-count")).longValue(), "dead-lettered at its 5th delivery");
        } finally {
            Sql.execute("ALTER TABLE ledger_entries DROP CONSTRAINT tests_poison");
        }
        assertTrue(dev.drain(replies).isEmpty(), "no outcome: nothing was recorded");
        assertEquals(0, LedgerApi.entryCount(account));
        // the key was never recorded: sent again once the fault is gone, it applies
        send(key, poison);
        assertEquals(201, dev.next(replies, BOUND).status());
    }

    /** The dead letter with this body (the queue is shared with earlier tests' stragglers). */
    private static Broker.Delivery deadLetterOf(String body) {
        Broker.Delivery[] found = {null};
        await().atMost(BOUND).until(() -> {
            for (Broker.Delivery dead : guest.drain(Broker.DEAD)) {
                if (dead.body().equals(body)) {
                    found[0] = dead;
                }
            }
            return found[0] != null;
        });
        return found[0];
    }

    private static double metric(String name) {
        return Metrics.value(RestAssured.get("/q/metrics").asString(), name)
                .orElse(name.startsWith("ledger_commands_queued") ? -1 : 0);
    }
}
