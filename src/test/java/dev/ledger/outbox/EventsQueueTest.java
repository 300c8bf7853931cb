package dev.ledger.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.HashMap;
import java.util.Map;

import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newAccount;
import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Events on a broker that has never seen the service (a virtual host of the test's own, created
 * empty before the start): once the instance is ready, a consumer can bind to the exchange, and the
 * events published while no consumer was bound wait in the service's queue {@code ledger.events}.
 */
@QuarkusTest
@TestProfile(EventsQueueTest.FreshVirtualHost.class)
class EventsQueueTest {
    static final String VHOST = "ledger-events-queue-test";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Events on, in a virtual host deleted and created anew before the application starts. */
    public static class FreshVirtualHost implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> settings = new HashMap<>(EventTap.freshVirtualHost(VHOST));
            settings.putAll(Map.of(
                    "ledger.events.rabbitmq.enabled", "true",
                    "ledger.messaging.rabbitmq.enabled", "false",
                    "ledger.events.relay.poll-interval", "1h"));
            return settings;
        }
    }

    private static Connection connect() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(EventTap.SHARED_PORT);
        factory.setVirtualHost(VHOST);
        return factory.newConnection("ledger tests: late consumer");
    }

    @Test
    void aConsumerBindsRightAfterReadinessAndEventsPublishedBeforeAnyConsumerWaitInTheQueue() throws Exception {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                given().when().get("/q/health/ready").then().statusCode(200));
        try (Connection connection = connect(); Channel channel = connection.createChannel()) {
            // a consumer that binds right after readiness: the exchange is there before any event
            String own = channel.queueDeclare().getQueue();
            channel.queueBind(own, EventTap.EXCHANGE, "#");
            assertEquals(0, channel.messageCount("ledger.events"), "the service's queue, declared at start, is empty");
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
        try (Connection connection = connect(); Channel channel = connection.createChannel()) {
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
                for (GetResponse got; (got = channel.basicGet("ledger.events", true)) != null; ) {
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
}
