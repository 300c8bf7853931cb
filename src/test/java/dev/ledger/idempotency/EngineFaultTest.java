package dev.ledger.idempotency;

import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.KafkaBroker;
import dev.ledger.testing.LedgerApi;
import dev.ledger.testing.Outcomes;
import dev.ledger.testing.Sql;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A fault inside the engine that is no dependency's (a bug, or a bad deployment): the ledger refuses one
 * row by a constraint the test adds, so the business step fails with an error that is neither an answer nor
 * an outage. Every door says so without applying, recording or holding anything: HTTP with a 500
 * {@code internal-error} (no SQL, no class name) and the outcome {@code error} in its metrics; Kafka by
 * retrying the record in place up to {@code ledger.messaging.max-deliveries}, then dead-lettering it
 * {@code internal-error}. Once the fault is gone, the same keys apply. (RabbitMQ's dead letter is
 * {@code CommandsTest}'s.)
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class EngineFaultTest {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final String POISON = "engine-fault";

    private static void poison() throws Exception {
        Sql.execute("ALTER TABLE ledger_entries ADD CONSTRAINT tests_engine_fault CHECK (reference IS DISTINCT FROM '" + POISON + "') NOT VALID");
    }

    @AfterEach
    void cure() throws Exception {
        Sql.execute("ALTER TABLE ledger_entries DROP CONSTRAINT IF EXISTS tests_engine_fault");
    }

    @Test
    void aPostThatMeetsABugIsA500ThatRecordsNothingAndLeavesItsKeyFree() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = "{\"type\":\"CREDIT\",\"amount\":40,\"sequence\":1,\"reference\":\"" + POISON + "\"}";
        poison();
        Outcomes http = Outcomes.since("http");

        Response failed = LedgerApi.postTransaction(account, key, body);
        assertEquals(500, failed.statusCode(), failed.asString());
        assertEquals("application/problem+json", failed.contentType());
        assertEquals("/problems/internal-error", failed.path("type"));
        assertEquals(500, (int) failed.path("status"));
        String text = failed.asString();
        for (String internal : new String[] {"ledger_entries", "tests_engine_fault", "constraint", "Exception", "dev.ledger", "SQL"}) {
            assertFalse(text.contains(internal), "the 500 shows " + internal + ": " + text);
        }
        http.assertChanged(Map.of("error", 1.0));
        assertEquals(0, LedgerApi.entryCount(account));

        // the key was given back, not held in flight nor recorded: the same request fails the same way, not 409
        assertEquals(500, LedgerApi.postTransaction(account, key, body).statusCode());

        cure();
        Response applied = LedgerApi.postTransaction(account, key, body);
        assertEquals(201, applied.statusCode(), applied.asString());
        assertNull(applied.header("Idempotent-Replayed"), "nothing was recorded for the key while it failed");
        assertEquals(40, LedgerApi.balance(account));
    }

    @Test
    void aKafkaCommandThatMeetsABugIsRetriedThenDeadLetteredInternalErrorAndItsKeyStaysFree() throws Exception {
        String account = LedgerApi.newAccount();
        String key = LedgerApi.newKey();
        String body = "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":9,\"sequence\":1,\"reference\":\"" + POISON + "\"}";
        poison();
        Outcomes kafka = Outcomes.since("kafka");
        try (KafkaProducer<byte[], byte[]> producer = KafkaBroker.producer();
             KafkaBroker.Reader dead = KafkaBroker.reader("ledger.dead.commands");
             KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            producer.send(KafkaBroker.command("dev", account, body, "idempotency-key", key, "correlation-id", "fault-" + key))
                    .get(20, TimeUnit.SECONDS);
            KafkaBroker.Received letter = dead.await(1, received -> key.equals(received.header("idempotency-key")), BOUND).get(0);
            assertEquals("internal-error", letter.header("x-ledger-problem"));
            assertEquals("dev", letter.header("x-ledger-client"));
            assertEquals(body, letter.value());
            kafka.assertChanged(Map.of("error", 5.0)); // ledger.messaging.max-deliveries attempts, then the dead letter
            assertTrue(outcomes.drain(received -> key.equals(received.header("idempotency-key")), Duration.ofSeconds(1)).isEmpty(),
                    "no outcome: nothing was recorded");
            assertEquals(0, LedgerApi.entryCount(account));

            cure();
            producer.send(KafkaBroker.command("dev", account, body, "idempotency-key", key)).get(20, TimeUnit.SECONDS);
            KafkaBroker.Received outcome = outcomes.await(1, received -> key.equals(received.header("idempotency-key")), BOUND).get(0);
            assertEquals(201, outcome.status(), outcome.value());
            assertNull(outcome.header("idempotent-replayed"));
            assertEquals(9, LedgerApi.balance(account));
        }
    }
}
