package dev.ledger.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.PaymentLoad;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Relays as separate processes of the packaged application, sharing one database: one killed with
 * SIGKILL between the broker's confirm and its mark, and several at work at once, one of them
 * unable to reach the broker.
 */
class OutboxRelayIT {
    private static final String API_KEY = "outbox-relay-it-key-0123456789abcdef";
    /** A port nothing listens on: an instance configured with it cannot reach its broker. */
    private static final String NO_BROKER = "1";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

    private final List<PackagedApp> apps = Collections.synchronizedList(new ArrayList<>());
    private EventTap tap;

    @BeforeEach
    void emptyDatabaseAndTap() throws Exception {
        assumeTrue(PackagedApp.configured(), "no local servers configured (tests.it.pg-host): skipped where Dev Services run");
        PackagedApp.recreateDatabase();
        tap = EventTap.onSharedBroker();
    }

    @AfterEach
    void stop() throws Exception {
        for (PackagedApp app : apps) {
            app.close();
        }
        if (tap != null) {
            tap.close();
        }
    }

    private PackagedApp start(String name, String brokerPort, Map<String, String> more) throws Exception {
        Map<String, String> env = new HashMap<>(Map.of(
                "LEDGER_API_KEYS", "it:" + PackagedApp.sha256Hex(API_KEY),
                "LEDGER_EVENTS_RABBITMQ_ENABLED", "true",
                "RABBITMQ_HOST", "127.0.0.1",
                "RABBITMQ_PORT", brokerPort,
                "RABBITMQ_VIRTUAL_HOST", EventTap.SHARED_VHOST,
                // the tap's queue gets every event; none piles up in a queue of the service's own on the shared broker
                "LEDGER_EVENTS_RABBITMQ_QUEUE", ""));
        env.putAll(more);
        boolean noBroker = NO_BROKER.equals(brokerPort);
        // Readiness waits for the events exchange: an instance that cannot reach its broker serves, unready.
        PackagedApp app = PackagedApp.start(env, "outbox-relay-it-" + name + ".log", noBroker ? "/q/health/live" : "/q/health/ready");
        apps.add(app);
        if (noBroker) {
            assertEquals(503, app.status("/q/health/ready"), "not ready before the events exchange is declared");
            // served although unready: once it is warm, as a ready one would be
            await().atMost(Duration.ofSeconds(60)).until(() -> warmedUp(app));
        }
        return app;
    }

    /** Whether the instance's warm-up check is UP (readiness may still be DOWN for another check). */
    private static boolean warmedUp(PackagedApp app) throws Exception {
        for (JsonNode check : JSON.readTree(app.get("/q/health/ready", null).body()).path("checks")) {
            if ("Warm-up".equals(check.path("name").asText())) {
                return "UP".equals(check.path("status").asText());
            }
        }
        return false;
    }

    private static long unpublished() throws Exception {
        try (Connection db = PackagedApp.database()) {
            return EventReconciliation.unpublished(db);
        }
    }

    private static String open(PackagedApp app) throws Exception {
        HttpResponse<String> opened = app.post("/accounts", API_KEY, "open-" + System.nanoTime(), "{\"currency\":\"EUR\"}");
        Matcher id = ID.matcher(opened.body());
        assertEquals(201, opened.statusCode(), opened.body());
        assertTrue(id.find());
        return id.group(1);
    }

    private static double metric(PackagedApp app, String name) throws Exception {
        return Metrics.value(app.get("/q/metrics", null).body(), name).orElse(-1);
    }

    @Test
    void aRelayKilledBetweenPublishAndMarkLeavesTheBatchToBePublishedAgainWithTheSameIds() throws Exception {
        // Written by an instance that cannot reach the broker: the events wait in PostgreSQL.
        PackagedApp writer = start("writer", NO_BROKER, Map.of());
        List<String> accounts = new ArrayList<>();
        for (int a = 0; a < 4; a++) {
            String account = open(writer);
            accounts.add(account);
            for (int sequence = 1; sequence <= 10; sequence++) {
                HttpResponse<String> credit = writer.post("/accounts/" + account + "/transactions", API_KEY,
                        "credit-" + System.nanoTime(), "{\"type\":\"CREDIT\",\"amount\":5,\"sequence\":" + sequence + "}");
                assertEquals(201, credit.statusCode(), credit.body());
            }
        }
        writer.close();
        assertEquals(44, unpublished());

        // A relay killed between the broker's confirm and its mark. The test's SHARE lock on the outbox lets the
        // relay claim its batch (FOR UPDATE SKIP LOCKED) and publish it, but holds the UPDATE that marks it.
        try (Connection lock = PackagedApp.database(); Statement sql = lock.createStatement()) {
            lock.setAutoCommit(false);
            sql.execute("LOCK TABLE outbox_events IN SHARE MODE");
            PackagedApp relay = start("killed", Integer.toString(EventTap.SHARED_PORT), Map.of());
            await().atMost(Duration.ofSeconds(30)).until(() -> tap.of(accounts).size() >= 44);
            assertEquals(44, unpublished(), "published, not yet marked");
            relay.kill();
            lock.rollback();
        }

        PackagedApp restarted = start("restarted", Integer.toString(EventTap.SHARED_PORT), Map.of());
        await().atMost(Duration.ofSeconds(30)).until(() -> unpublished() == 0);
        tap.drain(Duration.ofSeconds(30));

        try (Connection db = PackagedApp.database()) {
            EventReconciliation reconciliation = EventReconciliation.of(tap.deliveries(), db, accounts);
            System.out.println("[relay-crash] 44 events written while the broker was unreachable, published by a relay"
                    + " killed before its mark, then by its successor: " + reconciliation.summary()
                    + "; published by the successor: " + metric(restarted, "ledger_events_published_total"));
            assertTrue(reconciliation.complete(), reconciliation.summary());
            assertEquals(44, reconciliation.duplicates, "every event of the killed relay's batch again: " + reconciliation.summary());
        }
    }

    @Test
    void severalRelaysShareTheWorkWithoutPublishingAnEventTwice() throws Exception {
        String shared = Integer.toString(EventTap.SHARED_PORT);
        // C's own events reach the broker through the others' polls.
        List<PackagedApp> started = PackagedApp.startTogether(List.of(() -> start("a", shared, Map.of()),
                () -> start("b", shared, Map.of()), () -> start("c-no-broker", NO_BROKER, Map.of())));
        PackagedApp a = started.get(0);
        PackagedApp b = started.get(1);
        PackagedApp c = started.get(2);

        PaymentLoad load = new PaymentLoad("relays", new ApiClient("it", API_KEY),
                List.of(URI.create(a.baseUrl()), URI.create(b.baseUrl()), URI.create(c.baseUrl())));
        load.steady(9, 40);
        await().atMost(Duration.ofSeconds(120)).until(() -> tap.of(load.accounts()).size() >= 3000);
        load.stop();
        await().atMost(Duration.ofSeconds(60)).until(() -> unpublished() == 0);
        tap.drain(Duration.ofSeconds(30));

        double byA = metric(a, "ledger_events_published_total");
        double byB = metric(b, "ledger_events_published_total");
        double byC = metric(c, "ledger_events_published_total");
        try (Connection db = PackagedApp.database()) {
            EventReconciliation reconciliation = EventReconciliation.of(tap.deliveries(), db, load.accounts());
            System.out.printf("[relays] load over 3 instances: %s; published by A %.0f, by B %.0f, by C (no broker) %.0f; %s%n",
                    load.summary(), byA, byB, byC, reconciliation.summary());
            assertEquals(0, load.failed(), load.summary());
            assertTrue(reconciliation.complete(), reconciliation.summary());
            assertEquals(0, reconciliation.duplicates, reconciliation.summary());
            assertTrue(byA > 0 && byB > 0, "both relays with a broker published");
            assertEquals(0.0, byC);
            assertEquals(reconciliation.expected, (long) (byA + byB));
        }
    }
}
