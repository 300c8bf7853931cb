package dev.ledger.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.PaymentLoad;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.net.URL;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Events switched on: what the outbox writes, what the relay publishes, and in which order. */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class OutboxTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/")
    URL base;

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

    private long outboxRows(String account) throws Exception {
        try (Connection db = dataSource.getConnection();
             PreparedStatement sql = db.prepareStatement("SELECT count(*) FROM outbox_events WHERE account_id = ?")) {
            sql.setObject(1, UUID.fromString(account));
            try (ResultSet rows = sql.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    private List<EventTap.Delivery> awaitEvents(String account, int count) {
        await().atMost(Duration.ofSeconds(20)).until(() -> tap.of(List.of(account)).size() >= count);
        return tap.of(List.of(account));
    }

    private static JsonNode json(Response response) throws Exception {
        return JSON.readTree(response.asString());
    }

    @Test
    void publishesEachOpenedAccountAndAppliedTransactionWithTheBodyItsAnswerCarried() throws Exception {
        Response opened = openAccount(newKey(), "EUR");
        assertEquals(201, opened.statusCode(), opened.asString());
        String account = opened.path("id");
        String creditKey = newKey();
        Response credit = postTransaction(account, creditKey, "{\"type\":\"CREDIT\",\"amount\":900,\"sequence\":1,\"reference\":\"order-1\"}");
        assertEquals(201, credit.statusCode(), credit.asString());
        Response debit = postTransaction(account, newKey(), transaction("DEBIT", 400, 2));
        assertEquals(201, debit.statusCode(), debit.asString());

        List<EventTap.Delivery> events = awaitEvents(account, 3);
        assertEquals(List.of("account.opened", "transaction.applied", "transaction.applied"),
                events.stream().map(EventTap.Delivery::type).toList());
        List<Response> answers = List.of(opened, credit, debit);
        for (int i = 0; i < 3; i++) {
            EventTap.Delivery event = events.get(i);
            JsonNode body = event.body();
            assertEquals(List.of("eventId", "type", "occurredAt", "client", "accountId", "data"),
                    iterate(body.fieldNames()), event.raw());
            assertEquals(json(answers.get(i)), body.get("data"), "data is the answer's body: " + event.raw());
            assertEquals("dev", body.get("client").asText());
            assertEquals(account, body.get("accountId").asText());
            assertEquals(body.get("data").get("createdAt"), body.get("occurredAt"));
            assertEquals(event.eventId(), event.messageId(), "message_id is the eventId");
            assertEquals(event.type(), event.routingKey());
            assertEquals("application/json", event.contentType());
            assertEquals(2, event.deliveryMode(), "persistent");
            UUID.fromString(event.eventId());
        }
        assertEquals(3, outboxRows(account));
    }

    @Test
    void replaysAndRefusalsWriteAndPublishNoEvent() throws Exception {
        String account = newAccount();
        String key = newKey();
        String body = transaction("CREDIT", 500, 1);
        assertEquals(201, postTransaction(account, key, body).statusCode());
        awaitEvents(account, 2);

        Response replay = postTransaction(account, key, body);
        assertEquals("true", replay.header("Idempotent-Replayed"), replay.asString());
        assertEquals(409, postTransaction(account, newKey(), transaction("CREDIT", 5, 1)).statusCode()); // stale
        assertEquals(422, postTransaction(account, newKey(), transaction("DEBIT", 501, 2)).statusCode()); // funds
        assertEquals(422, postTransaction(account, key, transaction("CREDIT", 501, 1)).statusCode()); // key reused
        assertEquals(404, postTransaction(UUID.randomUUID().toString(), newKey(), transaction("CREDIT", 5, 1)).statusCode());
        String openKey = newKey();
        String second = openAccount(openKey, "EUR").path("id");
        assertEquals("true", openAccount(openKey, "EUR").header("Idempotent-Replayed"));

        // The second account's event comes after every refusal above: once it is in, none of them was published.
        awaitEvents(second, 1);
        assertEquals(2, tap.of(List.of(account)).size(), tap.of(List.of(account)).toString());
        assertEquals(2, outboxRows(account));
        assertEquals(1, tap.of(List.of(second)).size());
        assertEquals(1, outboxRows(second));
    }

    @Test
    void publishesANewEventWithoutWaitingForThePoll() {
        String account = newAccount(); // the relay polls once an hour here: only the wake-up publishes it
        long start = System.nanoTime();
        awaitEvents(account, 1);
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("[events] published %d ms after the 201%n", millis);
        assertTrue(millis < 5_000, millis + " ms");
    }

    @Test
    void keepsEachAccountsOrderUnderConcurrentPayments() throws Exception {
        // Six accounts at once, each with 30 credits one after another (all applied), and a seventh with
        // 30 credits racing each other (some stale): the relay's batches mix accounts, and the racing
        // account's events must follow the order its commits took (ascending sequences, by the sequence check).
        List<String> accounts = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            accounts.add(newAccount());
        }
        ExecutorService clients = Executors.newFixedThreadPool(6);
        List<Future<Integer>> streams = new ArrayList<>();
        for (String account : accounts.subList(0, 6)) {
            streams.add(clients.submit(() -> {
                for (int sequence = 1; sequence <= 30; sequence++) {
                    credit(account, sequence, sequence);
                }
                return 30;
            }));
        }
        String racing = accounts.get(6);
        List<String[]> storm = new ArrayList<>();
        for (int sequence = 1; sequence <= 30; sequence++) {
            storm.add(new String[]{newKey(), transaction("CREDIT", sequence, sequence)});
        }
        Collections.shuffle(storm);
        long applied = new PaymentLoad("racing", ApiClient.DEV, List.of(base.toURI()))
                .burst("/accounts/" + racing + "/transactions", storm).stream()
                .filter(a -> a.status() == 201).count();
        for (Future<Integer> stream : streams) {
            applied += stream.get(60, TimeUnit.SECONDS);
        }
        clients.shutdown();

        long expected = applied + accounts.size();
        await().atMost(Duration.ofSeconds(30)).until(() -> tap.of(accounts).size() >= expected);
        try (Connection db = dataSource.getConnection()) {
            EventReconciliation reconciliation = EventReconciliation.of(tap.deliveries(), db, accounts);
            System.out.println("[events] concurrent payments: 210 sent, " + applied + " applied; " + reconciliation.summary());
            assertTrue(reconciliation.complete(), reconciliation.summary());
            assertEquals(0, reconciliation.duplicates, reconciliation.summary());
        }
    }

    @Test
    void showsThePublishRateAndTheBacklogAgeInMetrics() {
        credit(newAccount(), 10, 1);
        await().atMost(Duration.ofSeconds(20)).until(() -> metric("ledger_events_published_total") >= 2);
        String metrics = given().when().get("/q/metrics").asString();
        assertTrue(metrics.contains("ledger_events_oldest_unpublished_age_seconds{broker=\"rabbitmq\"} "), metrics);
        assertTrue(metrics.contains("ledger_events_relay_failures_total{broker=\"rabbitmq\"} "), metrics);
    }

    static double metric(String name) {
        return Metrics.value(given().when().get("/q/metrics").asString(), name).orElse(-1);
    }

    private static List<String> iterate(java.util.Iterator<String> names) {
        List<String> list = new ArrayList<>();
        names.forEachRemaining(list::add);
        return list;
    }
}
