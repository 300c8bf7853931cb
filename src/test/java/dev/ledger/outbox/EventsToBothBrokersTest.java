package dev.ledger.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.ledger.testing.BrokerUsers;
import dev.ledger.testing.KafkaBroker;
import dev.ledger.testing.Metrics;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newAccount;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Events on a broker that has never seen the service (a virtual host of this class's own, created empty
 * before the start), to RabbitMQ and Kafka at once (API.md, "Events: the transactional outbox"). First,
 * before anything else has published there: once the instance is ready a consumer can bind to the
 * exchange, and the events published while no consumer was bound wait in the service's queue
 * {@code ledger.events}. Then every event on both brokers with the same id and body, Kafka's record keyed
 * by account with its headers, each account's events in order on both; and each broker tracked on its
 * own: with Kafka killed, RabbitMQ's events keep coming and Kafka's wait in PostgreSQL until it is back;
 * with RabbitMQ refusing the service's connections, the reverse. One class, so that both share one
 * started application and the fresh queue is looked at first.
 */
@QuarkusTest
@TestProfile(EventsToBothBrokersTest.BothBrokers.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EventsToBothBrokersTest {
    static final String VHOST = "ledger-events-both-test";
    static final String QUEUE = "ledger.events";
    /**
     * A topic of this run's own, which the service creates at start: named after this JVM, not randomly,
     * since the profile and the test see this class through two class loaders.
     */
    static final String TOPIC = "ledger.events.test-" + ProcessHandle.current().pid() + "-"
            + ProcessHandle.current().info().startInstant().map(start -> start.toEpochMilli()).orElse(0L);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Inject
    DataSource dataSource;

    /** Both brokers on; RabbitMQ in a virtual host of its own (its outage below must not touch other tests). */
    public static class BothBrokers implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> settings = new HashMap<>(EventTap.freshVirtualHost(VHOST));
            settings.putAll(Map.of(
                    "ledger.events.rabbitmq.enabled", "true",
                    "ledger.events.kafka.enabled", "true",
                    "ledger.events.kafka.topic", TOPIC,
                    "ledger.events.kafka.confirm-timeout", "3s",
                    "kafka.bootstrap.servers", KafkaBroker.bootstrap(),
                    "ledger.events.relay.poll-interval", "1s"));
            return settings;
        }
    }

    private static com.rabbitmq.client.Connection connect() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(EventTap.SHARED_PORT);
        factory.setVirtualHost(VHOST);
        return factory.newConnection("ledger tests: late consumer");
    }

    /** The fresh virtual host, before anything else here has published to it. */
    @Test
    @Order(1)
    void aConsumerBindsRightAfterReadinessAndEventsPublishedBeforeAnyConsumerWaitInTheQueue() throws Exception {
        await().atMost(BOUND).untilAsserted(() -> given().when().get("/q/health/ready").then().statusCode(200));
        try (com.rabbitmq.client.Connection connection = connect(); Channel channel = connection.createChannel()) {
            // a consumer that binds right after readiness: the exchange is there before any event
            String own = channel.queueDeclare().getQueue();
            channel.queueBind(own, EventTap.EXCHANGE, "#");
            assertEquals(0, channel.messageCount(QUEUE), "the service's queue, declared at start, is empty");
        }
        given().when().get("/q/health/ready").then()
                .body("checks.find { it.name == 'Events (RabbitMQ)' }.data.declared", equalTo(true));

        // no consumer bound now: the events must wait in the service's queue
        String account = newAccount();
        int credits = 20;
        for (int sequence = 1; sequence <= credits; sequence++) {
            credit(account, 100, sequence);
        }

        List<JsonNode> events = new ArrayList<>();
        try (com.rabbitmq.client.Connection connection = connect(); Channel channel = connection.createChannel()) {
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
                for (GetResponse got; (got = channel.basicGet(QUEUE, true)) != null; ) {
                    events.add(JSON.readTree(got.getBody()));
                }
                return events.size() >= credits + 1;
            });
        }
        List<String> seen = events.stream()
                .map(event -> event.path("type").asText() + ":" + event.path("data").path("sequence").asLong())
                .toList();
        List<String> expected = new ArrayList<>(List.of("account.opened:0"));
        for (int sequence = 1; sequence <= credits; sequence++) {
            expected.add("transaction.applied:" + sequence);
        }
        System.out.println("[events-queue] published with no consumer bound: " + expected.size()
                + ", found in ledger.events: " + seen.size());
        assertEquals(expected, seen, "every event, once, in order, for account " + account);
        events.forEach(event -> assertEquals(account, event.path("accountId").asText()));
    }

    /** Then both brokers, and each away in turn (the service's queue above is the RabbitMQ side's tap). */
    @Test
    @Order(2)
    void everyEventReachesBothBrokersAndOneBrokerDownDelaysOnlyItsOwnEvents() throws Exception {
        await().atMost(BOUND).untilAsserted(() -> given().when().get("/q/health/ready").then().statusCode(200)
                .body("checks.find { it.name == 'Events (Kafka)' }.data.topic", equalTo(TOPIC))
                .body("checks.find { it.name == 'Events (Kafka)' }.status", equalTo("UP")));
        try (KafkaBroker.Reader kafka = KafkaBroker.reader(TOPIC)) {
            // Both up: every event on both, the same.
            EventTap rabbit = EventTap.durable(EventTap.SHARED_PORT, VHOST, QUEUE);
            List<String> accounts = List.of(newAccount(), newAccount());
            for (int sequence = 1; sequence <= 5; sequence++) {
                for (String account : accounts) {
                    credit(account, 100, sequence);
                }
            }
            int expected = accounts.size() * 6;
            List<KafkaBroker.Received> onKafka = kafka.await(expected, of(accounts), BOUND);
            await().atMost(BOUND).until(() -> rabbit.of(accounts).size() >= expected);
            Map<String, String> rabbitBodies = rabbit.of(accounts).stream()
                    .collect(Collectors.toMap(EventTap.Delivery::eventId, EventTap.Delivery::raw));
            for (KafkaBroker.Received record : onKafka) {
                String eventId = record.header(KafkaEventPublisher.EVENT_ID);
                var body = JSON.readTree(record.value());
                assertEquals(body.path("eventId").asText(), eventId, "header event-id is the body's eventId");
                assertEquals(body.path("type").asText(), record.header(KafkaEventPublisher.EVENT_TYPE));
                assertEquals(body.path("accountId").asText(), record.key(), "keyed by account");
                assertEquals(rabbitBodies.get(eventId), record.value(), "the same body on both brokers, event " + eventId);
            }
            for (String account : accounts) {
                assertEquals(inOrder(), sequences(onKafka, account), "Kafka, in order, once each, account " + account);
                assertEquals(inOrder(), rabbit.of(List.of(account)).stream().map(EventTap.Delivery::sequence).toList(),
                        "RabbitMQ, in order, once each, account " + account);
            }
            System.out.println("[events-both] both up: " + expected + " events; on Kafka " + onKafka.size()
                    + ", on RabbitMQ " + rabbit.of(accounts).size());

            // Kafka killed: RabbitMQ's events keep coming; Kafka's wait in PostgreSQL.
            String account = accounts.get(0);
            KafkaBroker.kill();
            try {
                for (int sequence = 6; sequence <= 10; sequence++) {
                    credit(account, 100, sequence);
                }
                await().atMost(BOUND).until(() -> rabbit.of(List.of(account)).size() >= 11);
                // the tap can see an event before the relay has marked it delivered: wait for the mark
                await().atMost(BOUND).until(() -> undelivered("rabbitmq", accounts) == 0);
                assertEquals(5, undelivered("kafka", accounts), "Kafka's deliveries wait");
                await().atMost(BOUND).until(() -> metric("ledger_events_relay_failures_total{broker=\"kafka\"}") > 0);
                System.out.println("[events-both] Kafka down: RabbitMQ got 5 of 5, Kafka's 5 wait in PostgreSQL; failed Kafka rounds "
                        + metric("ledger_events_relay_failures_total{broker=\"kafka\"}")
                        + ", RabbitMQ's " + metric("ledger_events_relay_failures_total{broker=\"rabbitmq\"}"));
                assertEquals(0.0, metric("ledger_events_relay_failures_total{broker=\"rabbitmq\"}"));
            } finally {
                KafkaBroker.start();
            }
            // a record published again (same eventId) counts among the records: wait for the ten credits, not for any
            // eleven records (seen returning before credits 6 to 10 had arrived)
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> firstSeen(kafka.drain(of(List.of(account)), Duration.ofMillis(200))).size() >= 10);
            List<KafkaBroker.Received> afterKafka = kafka.drain(of(List.of(account)), Duration.ZERO);
            await().atMost(BOUND).until(() -> undelivered("kafka", accounts) == 0);
            assertEquals(range(1, 10), firstSeen(afterKafka), "Kafka's backlog, in order, account " + account);
            System.out.println("[events-both] Kafka back: its 5 published; records of the account on Kafka "
                    + afterKafka.size() + " (published again, same eventId: " + (afterKafka.size() - 11) + ")");

            // RabbitMQ refuses the service (no connection allowed in its virtual host): Kafka's events keep coming.
            String other = accounts.get(1);
            rabbit.close();
            BrokerUsers.ctl(null, "set_vhost_limits", "-p", VHOST, "{\"max-connections\": 0}");
            try {
                BrokerUsers.ctl(null, "close_all_connections", "-p", VHOST, "tests: RabbitMQ away for the service");
                for (int sequence = 6; sequence <= 10; sequence++) {
                    credit(other, 100, sequence);
                }
                kafka.await(11, of(List.of(other)), BOUND);
                await().atMost(BOUND).until(() -> undelivered("kafka", accounts) == 0);
                assertEquals(5, undelivered("rabbitmq", accounts), "RabbitMQ's deliveries wait");
                System.out.println("[events-both] RabbitMQ refusing: Kafka got 5 of 5, RabbitMQ's 5 wait in PostgreSQL");
            } finally {
                BrokerUsers.ctl(null, "clear_vhost_limits", "-p", VHOST);
            }
            try (EventTap again = EventTap.durable(EventTap.SHARED_PORT, VHOST, QUEUE)) {
                await().atMost(BOUND).until(() -> undelivered("rabbitmq", accounts) == 0);
                await().atMost(BOUND).until(() -> again.of(List.of(other)).size() >= 5);
                List<Long> late = again.of(List.of(other)).stream().map(EventTap.Delivery::sequence).toList();
                assertEquals(range(6, 10), List.copyOf(new LinkedHashSet<>(late)), "RabbitMQ's backlog, in order");
                System.out.println("[events-both] RabbitMQ back: its 5 published (" + late.size() + " deliveries)");
            }
            assertEquals(0, unpublishedEvents(accounts), "every event published to both brokers");
        }
    }

    private static Predicate<KafkaBroker.Received> of(List<String> accounts) {
        Set<String> keys = Set.copyOf(accounts);
        return record -> keys.contains(record.key());
    }

    /** account.opened (sequence 0) then credits 1 to 5. */
    private static List<Long> inOrder() {
        return range(0, 5);
    }

    private static List<Long> range(long from, long to) {
        List<Long> list = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            list.add(i);
        }
        return list;
    }

    private static List<Long> sequences(List<KafkaBroker.Received> records, String account) {
        return records.stream().filter(record -> record.key().equals(account))
                .map(record -> sequence(record.value())).toList();
    }

    /** Transaction sequences in the order each event was first seen (a re-published event is seen again). */
    private static List<Long> firstSeen(List<KafkaBroker.Received> records) {
        Map<String, Long> first = new LinkedHashMap<>();
        for (KafkaBroker.Received record : records) {
            first.putIfAbsent(record.header(KafkaEventPublisher.EVENT_ID), sequence(record.value()));
        }
        return first.values().stream().filter(sequence -> sequence > 0).toList();
    }

    private static long sequence(String body) {
        try {
            return JSON.readTree(body).path("data").path("sequence").asLong();
        } catch (Exception e) {
            throw new AssertionError(body, e);
        }
    }

    /** This test's events still to be published to {@code destination}. */
    private int undelivered(String destination, List<String> accounts) throws Exception {
        return count("SELECT count(*) FROM outbox_deliveries WHERE destination = '" + destination + "'"
                + " AND account_id = ANY (?::uuid[])", accounts);
    }

    private int unpublishedEvents(List<String> accounts) throws Exception {
        return count("SELECT count(*) FROM outbox_events WHERE published_at IS NULL AND account_id = ANY (?::uuid[])", accounts);
    }

    private int count(String sql, List<String> accounts) throws Exception {
        try (Connection db = dataSource.getConnection(); PreparedStatement query = db.prepareStatement(sql)) {
            query.setArray(1, db.createArrayOf("text", accounts.toArray()));
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getInt(1);
            }
        }
    }

    private static double metric(String series) {
        return Metrics.value(given().when().get("/q/metrics").asString(), series).orElse(-1);
    }
}
