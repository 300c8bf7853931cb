package dev.ledger.transfer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.outbox.EventTap;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static dev.ledger.testing.LedgerApi.account;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.getTransfer;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.settle;
import static dev.ledger.testing.LedgerApi.transfer;
import static dev.ledger.testing.LedgerApi.transferBody;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transfers' events, switched on (published to the shared broker, the relay woken by the request path): one
 * per account of each change, in each account's stream in commit order, the data the transfer at that moment
 * (the answer's body); none for a leg as a transaction, none for a refusal. And a hold that expires with
 * nobody looking at it: the expiry job releases it and reports it, and a post then finds it expired.
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class TransferEventsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    DataSource dataSource;

    private EventTap tap;

    @BeforeEach
    void tap() throws Exception {
        tap = EventTap.onSharedBroker();
    }

    @AfterEach
    void closeTap() throws Exception {
        tap.close();
    }

    private List<EventTap.Delivery> awaitEvents(String account, int count) {
        await().atMost(Duration.ofSeconds(30)).until(() -> tap.of(List.of(account)).size() >= count);
        return tap.of(List.of(account));
    }

    private static JsonNode json(Response response) throws Exception {
        return JSON.readTree(response.asString());
    }

    /** The events' types, in the order the account's stream delivered them. */
    private static List<String> types(List<EventTap.Delivery> events) {
        return events.stream().map(EventTap.Delivery::type).toList();
    }

    @Test
    void eachChangeIsOneEventPerAccountCarryingTheTransferAsItsAnswerShowedIt() throws Exception {
        String debit = newAccount();
        credit(debit, 10_000, 1);
        String credit = newAccount();
        Response posted = transfer(transferBody(debit, credit, 1000, ""));
        Response hold = transfer(transferBody(debit, credit, 500, "\"pending\":true"));
        Response postedHold = settle(hold.path("id"), "post", "{\"amount\":200}");
        Response voidable = transfer(transferBody(debit, credit, 300, "\"pending\":true"));
        Response voided = settle(voidable.path("id"), "void", "{}");
        Response reversal = settle(posted.path("id"), "reversals", "{\"amount\":100}");
        // refusals write nothing
        assertEquals(422, transfer(transferBody(debit, credit, 1_000_000, "")).statusCode());
        assertEquals(409, settle(voidable.path("id"), "post", "{}").statusCode());
        assertEquals(422, settle(posted.path("id"), "reversals", "{\"amount\":901}").statusCode());
        List<Response> answers = List.of(posted, hold, postedHold, voidable, voided, reversal);
        for (Response answer : answers) {
            assertTrue(answer.statusCode() == 200 || answer.statusCode() == 201, answer.asString());
        }
        String last = newAccount(); // its event comes after every change above: once in, none of the refusals was published
        awaitEvents(last, 1);

        List<String> expected = List.of("transfer.posted", "transfer.pending", "transfer.posted", "transfer.pending",
                "transfer.voided", "transfer.posted");
        List<EventTap.Delivery> debitEvents = awaitEvents(debit, 8);
        List<EventTap.Delivery> creditEvents = awaitEvents(credit, 7);
        assertEquals(8, debitEvents.size(), types(debitEvents).toString());
        assertEquals(7, creditEvents.size(), types(creditEvents).toString());
        assertEquals("account.opened", debitEvents.get(0).type());
        assertEquals("transaction.applied", debitEvents.get(1).type(), "the funding credit, a transaction of its own");
        assertEquals(expected, types(debitEvents.subList(2, 8)), "no transaction.applied for a leg");
        assertEquals("account.opened", creditEvents.get(0).type());
        assertEquals(expected, types(creditEvents.subList(1, 7)));
        for (int i = 0; i < expected.size(); i++) {
            JsonNode data = json(answers.get(i));
            for (EventTap.Delivery event : List.of(debitEvents.get(i + 2), creditEvents.get(i + 1))) {
                JsonNode body = event.body();
                assertEquals(data, body.get("data"), "data is the answer's body: " + event.raw());
                assertEquals("dev", body.get("client").asText());
                assertEquals(event.eventId(), event.messageId());
                assertEquals(event.type(), event.routingKey());
            }
            assertEquals(debit, debitEvents.get(i + 2).accountId());
            assertEquals(credit, creditEvents.get(i + 1).accountId());
            assertTrue(!debitEvents.get(i + 2).eventId().equals(creditEvents.get(i + 1).eventId()), "an event id per account");
        }
        assertEquals(posted.path("id").toString(), debitEvents.get(7).body().path("data").path("reversalOf").asText());
        assertEquals(0, debitEvents.get(2).body().path("data").path("reversedAmount").asLong(),
                "the posted transfer as it was made, reversed since");
    }

    @Test
    void aHoldExpiringWithNobodyLookingIsReleasedAndReportedThenAPostIsRefused() throws Exception {
        String debit = newAccount();
        credit(debit, 1000, 1);
        String credit = newAccount();
        double releasedBefore = Metrics.value(given().when().get("/q/metrics").asString(), "ledger_transfers_expired_total").orElse(0);
        Response hold = transfer(transferBody(debit, credit, 600, "\"pending\":true,\"timeoutSeconds\":1"));
        assertEquals(201, hold.statusCode(), hold.asString());
        String id = hold.path("id");

        // nothing asks for the hold: the expiry job releases it and writes an event in each account's stream
        List<EventTap.Delivery> debitEvents = awaitEvents(debit, 4);
        List<EventTap.Delivery> creditEvents = awaitEvents(credit, 3);
        assertEquals(List.of("account.opened", "transaction.applied", "transfer.pending", "transfer.expired"), types(debitEvents));
        assertEquals(List.of("account.opened", "transfer.pending", "transfer.expired"), types(creditEvents));
        JsonNode expired = debitEvents.get(3).body().get("data");
        assertEquals("expired", expired.get("status").asText());
        assertEquals(0, expired.get("postedAmount").asLong());
        assertEquals(hold.path("expiresAt").toString(), expired.get("expiresAt").asText());
        assertEquals(expired, creditEvents.get(2).body().get("data"));
        assertTrue(!Instant.parse(debitEvents.get(3).body().get("occurredAt").asText()).isBefore(Instant.parse(hold.path("expiresAt"))),
                "released once its time had come");
        assertEquals("expired", status(id), "released in PostgreSQL");
        assertTrue(Metrics.value(given().when().get("/q/metrics").asString(), "ledger_transfers_expired_total").orElse(0) >= releasedBefore + 1);

        Response post = settle(id, "post", "{}");
        assertEquals(409, post.statusCode(), post.asString());
        assertEquals("/problems/transfer-expired", post.path("type"));
        assertEquals("expired", getTransfer(id).path("status"));
        Response restored = account(debit);
        assertEquals(1000, (int) restored.path("balance"));
        assertEquals(0, (int) restored.path("pendingDebits"));
        assertEquals(1000, (int) restored.path("available"));
        assertEquals(0, (int) account(credit).path("pendingCredits"));
        assertEquals(0, (int) account(credit).path("balance"));
    }

    private String status(String transfer) throws Exception {
        try (Connection db = dataSource.getConnection();
             PreparedStatement sql = db.prepareStatement("SELECT status FROM transfers WHERE id = ?")) {
            sql.setObject(1, UUID.fromString(transfer));
            try (ResultSet rows = sql.executeQuery()) {
                rows.next();
                return rows.getString(1);
            }
        }
    }
}
