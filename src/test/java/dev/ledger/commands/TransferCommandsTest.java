package dev.ledger.commands;

import dev.ledger.testing.AsyncApiContract;
import dev.ledger.testing.Broker;
import dev.ledger.testing.BrokerUsers;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.KafkaBroker;
import dev.ledger.testing.LedgerApi;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static dev.ledger.testing.LedgerApi.transferBody;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transfers through the brokers (API.md, the transfer commands over RabbitMQ and Kafka): the four commands by
 * routing key and by {@code ledger-command} header, each answered with exactly the HTTP answer; one key one
 * request across HTTP, RabbitMQ and Kafka; and the refusals of a command that cannot be read.
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class TransferCommandsTest {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static Broker dev;
    private static KafkaProducer<byte[], byte[]> producer;

    @BeforeAll
    static void connect() throws Exception {
        BrokerUsers.ensure("dev");
        dev = Broker.as("dev", BrokerUsers.PASSWORD, 0);
        producer = KafkaBroker.producer();
    }

    @AfterAll
    static void disconnect() throws Exception {
        dev.close();
        producer.close(Duration.ofSeconds(5));
    }

    /** A transfer command over RabbitMQ, its outcome from its reply queue (the one on ledger.outcomes is the same message). */
    private static Broker.Delivery rabbitmq(String command, String key, String body) throws Exception {
        String replies = dev.replyQueue();
        String outcomes = dev.outcomeQueue();
        AsyncApiContract.rabbitmq(AsyncApiContract.commandMessage("rabbitmq", command),
                Broker.command(key, "dev", replies).build(), body.getBytes(StandardCharsets.UTF_8));
        dev.publish(command, Broker.command(key, "dev", replies).build(), body);
        Broker.Delivery reply = dev.next(replies, BOUND);
        Broker.Delivery published = dev.next(outcomes, BOUND);
        assertEquals(reply.body(), published.body());
        assertEquals("transfers." + reply.status(), published.routingKey());
        return reply;
    }

    /** A transfer command over Kafka, keyed by {@code recordKey}, and its outcome. */
    private static KafkaBroker.Received kafka(String command, String recordKey, String key, String body) throws Exception {
        ProducerRecord<byte[], byte[]> record = KafkaBroker.command("dev", recordKey, body, "idempotency-key", key,
                "ledger-command", command);
        AsyncApiContract.kafka(AsyncApiContract.commandMessage("kafka", command), recordKey,
                Map.of("idempotency-key", key, "ledger-command", command), body.getBytes(StandardCharsets.UTF_8));
        try (KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            producer.send(record).get(20, TimeUnit.SECONDS);
            KafkaBroker.Received outcome = outcomes.await(1, received -> key.equals(received.header("idempotency-key")), BOUND).get(0);
            assertEquals(recordKey, outcome.key(), "keyed as the command was");
            return outcome;
        }
    }

    @Test
    void everyTransferCommandIsTheHttpRequestWhicheverBrokerCarriesIt() throws Exception {
        String debit = LedgerApi.newAccount();
        LedgerApi.credit(debit, 10_000, 1);
        String credit = LedgerApi.newAccount();

        // made over RabbitMQ, the same key over HTTP is its replay
        String made = LedgerApi.newKey();
        String body = transferBody(debit, credit, 1000, "\"reference\":\"over-rabbitmq\"");
        Broker.Delivery created = rabbitmq("transfers.create", made, body);
        assertEquals(201, created.status(), created.body());
        JsonPath transfer = JsonPath.from(created.body());
        assertEquals("posted", transfer.getString("status"));
        Response http = LedgerApi.post("/transfers", made, body);
        assertEquals(201, http.statusCode());
        assertEquals("true", http.header("Idempotent-Replayed"));
        assertEquals(created.body(), http.asString(), "one key, one request, whichever door");

        // a hold over Kafka (keyed by its debit account), posted in part over RabbitMQ, replayed over Kafka
        String holdKey = LedgerApi.newKey();
        String holdBody = transferBody(debit, credit, 600, "\"pending\":true");
        KafkaBroker.Received hold = kafka("transfers.create", debit, holdKey, holdBody);
        assertEquals(201, hold.status(), hold.value());
        String holdId = JsonPath.from(hold.value()).getString("id");
        String postKey = LedgerApi.newKey();
        String postBody = "{\"transferId\":\"" + holdId + "\",\"amount\":400}";
        Broker.Delivery posted = rabbitmq("transfers.post", postKey, postBody);
        assertEquals(200, posted.status(), posted.body());
        assertEquals(400L, JsonPath.from(posted.body()).getLong("postedAmount"));
        KafkaBroker.Received postedAgain = kafka("transfers.post", debit, postKey, postBody);
        assertEquals("true", postedAgain.header("idempotent-replayed"));
        assertEquals(posted.body(), postedAgain.value());
        // the same key over HTTP is the post's path and body, the transfer's id in the path
        Response postOverHttp = LedgerApi.post("/transfers/" + holdId + "/post", postKey, "{\"amount\":400}");
        assertEquals("true", postOverHttp.header("Idempotent-Replayed"), postOverHttp.asString());
        assertEquals(posted.body(), postOverHttp.asString());

        // another hold voided over Kafka (its record keyed by anything: not checked), the first transfer reversed
        String voidable = JsonPath.from(kafka("transfers.create", debit, LedgerApi.newKey(),
                transferBody(debit, credit, 100, "\"pending\":true")).value()).getString("id");
        KafkaBroker.Received voided = kafka("transfers.void", credit, LedgerApi.newKey(), "{\"transferId\":\"" + voidable + "\"}");
        assertEquals(200, voided.status(), voided.value());
        assertEquals("voided", JsonPath.from(voided.value()).getString("status"));
        KafkaBroker.Received reversed = kafka("transfers.reverse", debit, LedgerApi.newKey(),
                "{\"transferId\":\"" + transfer.getString("id") + "\",\"amount\":250,\"reference\":\"refund\"}");
        assertEquals(201, reversed.status(), reversed.value());
        assertEquals(transfer.getString("id"), JsonPath.from(reversed.value()).getString("reversalOf"));

        // a refusal is recorded and answered as over HTTP
        Broker.Delivery twice = rabbitmq("transfers.void", LedgerApi.newKey(), "{\"transferId\":\"" + voidable + "\"}");
        assertEquals(409, twice.status());
        assertEquals("/problems/transfer-already-voided", JsonPath.from(twice.body()).getString("type"));

        // applied once each: 1000 and 400 moved, 250 given back
        assertEquals(10_000 - 1000 - 400 + 250, LedgerApi.balance(debit));
        assertEquals(1000 + 400 - 250, LedgerApi.balance(credit));
        Response account = LedgerApi.account(debit);
        assertEquals(0L, ((Number) account.path("pendingDebits")).longValue(), "the post released the rest of its hold");
    }

    @Test
    void aTransferCommandThatCannotBeReadIsDeadLetteredWithItsReasonAndItsCommand() throws Exception {
        String debit = LedgerApi.newAccount();
        String credit = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        try (KafkaBroker.Reader dead = KafkaBroker.reader("ledger.dead.commands");
             KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            String wrongKey = LedgerApi.newKey();
            producer.send(KafkaBroker.command("dev", credit, transferBody(debit, credit, 5, ""), "idempotency-key", wrongKey,
                    "ledger-command", "transfers.create")).get(20, TimeUnit.SECONDS);
            String notUuid = LedgerApi.newKey();
            producer.send(KafkaBroker.command("dev", debit, "{\"transferId\":\"not-a-transfer\"}", "idempotency-key", notUuid,
                    "ledger-command", "transfers.void")).get(20, TimeUnit.SECONDS);
            String unknown = LedgerApi.newKey();
            producer.send(KafkaBroker.command("dev", debit, "{}", "idempotency-key", unknown,
                    "ledger-command", "transfers.cancel")).get(20, TimeUnit.SECONDS);
            for (String refused : new String[] {wrongKey, notUuid, unknown}) {
                assertEquals("invalid-request", dead.await(1, received -> refused.equals(received.header("idempotency-key")), BOUND)
                        .get(0).header("x-ledger-problem"), refused);
                assertEquals(400, outcomes.await(1, received -> refused.equals(received.header("idempotency-key")), BOUND)
                        .get(0).status());
            }
        }
        // over RabbitMQ, the dead letter keeps the command it was, and reaches the dead-letter queue
        String replies = dev.replyQueue();
        String garbled = "{\"debitAccountId\":\"" + debit + "\",\"creditAccountId\":\"" + credit + "\",\"ammount\":5}";
        dev.publish("transfers.create", Broker.command(key, "dev", replies).build(), garbled);
        assertEquals(400, dev.next(replies, BOUND).status());
        Broker.Delivery letter = deadLetterOf(garbled);
        assertEquals("invalid-request", letter.header("x-ledger-problem"));
        assertEquals("transfers.create", letter.header("ledger-command"));
        assertEquals(0, LedgerApi.entryCount(debit));
        assertNull(LedgerApi.lookup(key).path("state"), "nothing recorded for an unreadable command");
    }

    /** The dead letter with this body (the queue is shared with other tests' stragglers). */
    private static Broker.Delivery deadLetterOf(String body) throws Exception {
        try (Broker guest = Broker.asGuest()) {
            Broker.Delivery[] found = {null};
            org.awaitility.Awaitility.await().atMost(BOUND).until(() -> {
                for (Broker.Delivery letter : guest.drain(Broker.DEAD)) {
                    if (letter.body().equals(body)) {
                        found[0] = letter;
                    }
                }
                return found[0] != null;
            });
            assertTrue(found[0].header("x-ledger-problem") != null);
            return found[0];
        }
    }
}
