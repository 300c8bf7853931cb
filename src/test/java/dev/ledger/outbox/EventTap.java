package dev.ledger.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.ledger.testing.AsyncApiContract;
import dev.ledger.testing.BrokerUsers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * A test's consumer of the exchange {@code ledger.events}: a queue of its own bound with {@code #},
 * recording every delivery in arrival order (acknowledged after it is recorded). A broker that
 * restarts may deliver a message again (its acknowledgement was lost); such a delivery carries
 * {@code redelivered}, which tells it apart from the relay publishing an event twice.
 */
public final class EventTap implements AutoCloseable {
    public static final String EXCHANGE = "ledger.events";
    /** The shared broker's virtual host for the tests ({@code tests.rabbitmq-vhost}; "/" in CI). */
    public static final String SHARED_VHOST = System.getProperty("tests.rabbitmq-vhost", "/");
    public static final int SHARED_PORT = 5672;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Deletes {@code vhost} on the shared broker and creates it anew (for a test whose broker outage or
     * queue must touch no other test), and returns the settings that point the service at it.
     */
    public static Map<String, String> freshVirtualHost(String vhost) {
        try {
            try {
                BrokerUsers.ctl(null, "delete_vhost", vhost);
            } catch (IllegalStateException absent) {
                // first run on this broker
            }
            BrokerUsers.ctl(null, "add_vhost", vhost);
            BrokerUsers.ctl(null, "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return Map.of("rabbitmq-host", "127.0.0.1", "rabbitmq-port", Integer.toString(SHARED_PORT),
                "rabbitmq-virtual-host", vhost);
    }

    /**
     * One message as the tap received it: its properties, its body ({@code raw}) and the members of
     * the body a reconciliation reads (kept instead of the parsed document: an outage under load
     * brings tens of thousands).
     */
    public record Delivery(String messageId, String routingKey, String contentType, Integer deliveryMode,
                           boolean redelivered, String raw, String eventId, String type, String accountId,
                           String resourceId, long sequence, String traceparent) {
        static Delivery of(com.rabbitmq.client.Delivery message) {
            String raw = new String(message.getBody(), StandardCharsets.UTF_8);
            JsonNode body;
            try {
                body = JSON.readTree(raw);
            } catch (IOException e) {
                body = JSON.createObjectNode();
            }
            return new Delivery(message.getProperties().getMessageId(), message.getEnvelope().getRoutingKey(),
                    message.getProperties().getContentType(), message.getProperties().getDeliveryMode(),
                    message.getEnvelope().isRedeliver(), raw, body.path("eventId").asText(), body.path("type").asText(),
                    body.path("accountId").asText(), body.path("data").path("id").asText(),
                    body.path("data").path("sequence").asLong(), traceparent(message.getProperties().getHeaders()));
        }

        private static String traceparent(Map<String, Object> headers) {
            Object value = headers == null ? null : headers.get("traceparent");
            return value == null ? null : value.toString();
        }

        /** The body, parsed. */
        public JsonNode body() {
            try {
                return JSON.readTree(raw);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + raw, e);
            }
        }
    }

    private static final String MARKER = "tests.marker";

    private final Connection connection;
    private final Channel channel;
    private final List<Delivery> deliveries = new ArrayList<>();
    /** Events that disagree with the AsyncAPI document (the first few): any fails the test that reads the tap. */
    private final List<String> disagreements = new ArrayList<>();
    private final Set<String> markers = ConcurrentHashMap.newKeySet();

    private EventTap(String host, int port, String vhost, String queue) throws IOException, TimeoutException {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(host);
        factory.setPort(port);
        factory.setVirtualHost(vhost);
        // A restarted node: reconnect and consume the durable queue again.
        factory.setAutomaticRecoveryEnabled(true);
        factory.setNetworkRecoveryInterval(500);
        connection = factory.newConnection("ledger tests: event tap");
        Channel channel = connection.createChannel();
        channel.exchangeDeclare(EXCHANGE, BuiltinExchangeType.TOPIC, true);
        String name = queue == null
                ? channel.queueDeclare().getQueue() // server-named, exclusive, gone with the connection
                : channel.queueDeclare(queue, true, false, false, null).getQueue();
        channel.queueBind(name, EXCHANGE, "#");
        channel.basicQos(1000);
        channel.basicConsume(name, false, (tag, message) -> {
            if (MARKER.equals(message.getEnvelope().getRoutingKey())) {
                markers.add(new String(message.getBody(), StandardCharsets.UTF_8));
            } else {
                Delivery delivery = Delivery.of(message);
                String disagreement = disagreement(message);
                synchronized (deliveries) {
                    deliveries.add(delivery);
                    if (disagreement != null && disagreements.size() < 5) {
                        disagreements.add(disagreement);
                    }
                }
            }
            channel.basicAck(message.getEnvelope().getDeliveryTag(), false);
        }, tag -> {
        });
        this.channel = channel;
    }

    /** On the shared broker (127.0.0.1:5672, the tests' virtual host), a queue that lives as long as the tap. */
    public static EventTap onSharedBroker() throws IOException, TimeoutException {
        return new EventTap("127.0.0.1", SHARED_PORT, SHARED_VHOST, null);
    }

    /** On a node of the test's own, a durable queue {@code queue} that outlives a restart of the node. */
    public static EventTap durable(int port, String queue) throws IOException, TimeoutException {
        return durable(port, "/", queue);
    }

    /** The same in virtual host {@code vhost}. */
    public static EventTap durable(int port, String vhost, String queue) throws IOException, TimeoutException {
        return new EventTap("127.0.0.1", port, vhost, queue);
    }

    /** Every delivery so far, in arrival order; fails when any event disagreed with the AsyncAPI document. */
    public List<Delivery> deliveries() {
        synchronized (deliveries) {
            if (!disagreements.isEmpty()) {
                throw new AssertionError(String.join("\n", disagreements));
            }
            return List.copyOf(deliveries);
        }
    }

    /** Why an event disagrees with the AsyncAPI document, or null (checked on the consumer's thread, reported by the reads). */
    private static String disagreement(com.rabbitmq.client.Delivery message) {
        try {
            AsyncApiContract.rabbitmq(AsyncApiContract.eventMessage("rabbitmq", message.getProperties().getType()),
                    message.getProperties(), message.getBody());
            return null;
        } catch (AssertionError disagrees) {
            return disagrees.getMessage();
        }
    }

    /** The deliveries of events of these accounts, in arrival order. */
    public List<Delivery> of(Collection<String> accountIds) {
        Set<String> accounts = Set.copyOf(accountIds);
        return deliveries().stream().filter(d -> accounts.contains(d.accountId())).toList();
    }

    /**
     * Waits until the tap has received everything the exchange routed to its queue before this call: it
     * sends a marker through the exchange and waits for it (a queue is first in, first out).
     */
    public void drain(Duration atMost) throws IOException {
        String marker = UUID.randomUUID().toString();
        channel.basicPublish(EXCHANGE, MARKER, null, marker.getBytes(StandardCharsets.UTF_8));
        await().atMost(atMost).until(() -> markers.contains(marker));
    }

    @Override
    public void close() throws IOException {
        connection.abort();
    }
}
