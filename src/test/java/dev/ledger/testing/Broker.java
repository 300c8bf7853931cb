package dev.ledger.testing;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * The tests' side of the broker the application uses: RabbitMQ's own Java client, connected as a
 * given broker user to the host, port and virtual host of {@code RABBITMQ_*} (the pom's
 * local-services profile; system properties {@code rabbitmq-*} in the packaged-application tests).
 * It publishes commands as a client does (with publisher confirms) and reads what the service
 * published: outcomes (a queue of the test's own bound to {@code ledger.outcomes}), replies and
 * dead letters.
 */
public final class Broker implements AutoCloseable {
    public static final String COMMANDS = "ledger.commands";
    public static final String ROUTING_KEY = "transactions.post";
    public static final String OUTCOMES = "ledger.outcomes";
    public static final String DEAD = "ledger.commands.dead";

    private final Connection connection;
    private final Channel channel;

    private Broker(Connection connection) throws IOException {
        this.connection = connection;
        this.channel = connection.createChannel();
        channel.confirmSelect();
    }

    /** A connection as broker user {@code user} to the broker at {@code port} (the configured one when 0). */
    public static Broker as(String user, String password, int port) throws IOException, TimeoutException {
        return as(user, password, port, port != 0 ? "/" : virtualHost());
    }

    /** A connection as {@code user} to the broker at 127.0.0.1:{@code port}, virtual host {@code virtualHost}. */
    public static Broker as(String user, String password, int port, String virtualHost) throws IOException, TimeoutException {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(setting("RABBITMQ_HOST", "rabbitmq-host", "127.0.0.1"));
        factory.setPort(port != 0 ? port : Integer.parseInt(setting("RABBITMQ_PORT", "rabbitmq-port", "5672")));
        factory.setVirtualHost(virtualHost);
        factory.setUsername(user);
        factory.setPassword(password);
        return new Broker(factory.newConnection("ledger-tests-" + user));
    }

    public static Broker asGuest() throws IOException, TimeoutException {
        return as("guest", "guest", 0);
    }

    public static String virtualHost() {
        return setting("RABBITMQ_VIRTUAL_HOST", "rabbitmq-virtual-host", "/");
    }

    private static String setting(String env, String property, String fallback) {
        return Optional.ofNullable(System.getenv(env)).or(() -> Optional.ofNullable(System.getProperty(property)))
                .orElse(fallback);
    }

    /** A command as a client sends it; {@code properties} set message_id, user_id and the rest. */
    public void publish(AMQP.BasicProperties properties, String body) throws Exception {
        publish(ROUTING_KEY, properties, body);
    }

    /** A command under {@code routingKey}, the command's name ({@code transfers.create}, ...). */
    public void publish(String routingKey, AMQP.BasicProperties properties, String body) throws Exception {
        channel.basicPublish(COMMANDS, routingKey, properties, body.getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(10_000);
    }

    /** The usual properties of a command: JSON, persistent, its key, the sending client, a reply queue. */
    public static AMQP.BasicProperties.Builder command(String key, String client, String replyTo) {
        AMQP.BasicProperties.Builder builder = new AMQP.BasicProperties.Builder()
                .contentType("application/json").deliveryMode(2).messageId(key).userId(client);
        if (replyTo != null) {
            builder.replyTo(replyTo);
        }
        return builder;
    }

    /** A queue of the test's own (exclusive, gone with the connection), for replies. */
    public String replyQueue() throws IOException {
        return channel.queueDeclare("", false, true, true, null).getQueue();
    }

    /** A queue of the test's own bound to every outcome ({@code ledger.outcomes}, {@code #}). */
    public String outcomeQueue() throws IOException {
        channel.exchangeDeclare(OUTCOMES, "topic", true, false, null);
        String queue = channel.queueDeclare("ledger-tests-outcomes-" + UUID.randomUUID(), false, true, true, null).getQueue();
        channel.queueBind(queue, OUTCOMES, "#");
        return queue;
    }

    /** The next message of {@code queue}, waiting up to {@code bound}; fails when none arrives. */
    public Delivery next(String queue, Duration bound) {
        GetResponse[] got = {null};
        await().atMost(bound).pollInterval(Duration.ofMillis(20)).until(() -> (got[0] = channel.basicGet(queue, true)) != null);
        return Delivery.of(got[0]);
    }

    /** Every message of {@code queue} now (none waited for). */
    public List<Delivery> drain(String queue) throws IOException {
        List<Delivery> all = new ArrayList<>();
        for (GetResponse got; (got = channel.basicGet(queue, true)) != null; ) {
            all.add(Delivery.of(got));
        }
        return all;
    }

    public long depth(String queue) throws IOException {
        return channel.messageCount(queue);
    }

    public void purge(String queue) throws IOException {
        channel.queuePurge(queue);
    }

    public Channel channel() {
        return channel;
    }

    /**
     * A message the service published. An outcome or a dead letter is checked against the AsyncAPI
     * document as it is taken ({@link AsyncApiContract}).
     */
    public record Delivery(AMQP.BasicProperties properties, String body, String routingKey) {
        static Delivery of(GetResponse got) {
            Delivery delivery = new Delivery(got.getProps(), new String(got.getBody(), StandardCharsets.UTF_8),
                    got.getEnvelope().getRoutingKey());
            if (delivery.header("x-ledger-problem") != null) {
                AsyncApiContract.rabbitmq("rabbitmqDeadLetter", got.getProps(), got.getBody());
            } else if (delivery.header("ledger-status") != null) {
                AsyncApiContract.rabbitmq("rabbitmqOutcome", got.getProps(), got.getBody());
            }
            return delivery;
        }

        public Object header(String name) {
            Map<String, Object> headers = properties.getHeaders() == null ? new HashMap<>() : properties.getHeaders();
            Object value = headers.get(name);
            return value == null ? null : value instanceof com.rabbitmq.client.LongString ? value.toString() : value;
        }

        public int status() {
            return ((Number) header("ledger-status")).intValue();
        }

        public boolean replayed() {
            return Boolean.TRUE.equals(header("idempotent-replayed"));
        }
    }

    @Override
    public void close() throws IOException, TimeoutException {
        if (connection.isOpen()) {
            connection.close();
        }
    }
}
