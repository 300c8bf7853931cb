package dev.ledger.events;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.ledger.config.LedgerConfig;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Publishes events to the topic exchange {@code ledger.events.rabbitmq.exchange} (declared, durable),
 * routing key = the event's type, {@code message_id} = its id, persistent, on a channel in confirm
 * mode: a batch completes when RabbitMQ has confirmed every message.
 *
 * <p>RabbitMQ's Java client directly, not SmallRye's outgoing channel: that channel's publisher queues
 * what it could not send and sends it after a reconnect by itself, and forgets the confirms it awaited
 * when the channel changes. Neither suits an outbox, whose retries must be the relay's alone, in order.
 * Here nothing is kept: not connected means failing at once, and any failure closes the connection, so
 * that late confirms of an abandoned batch can never be taken for the next one's.
 *
 * <p>The client's calls block (a socket write, RabbitMQ's flow control), so they run on one thread of
 * their own, never on an event loop; one thread also keeps a batch in order on its one channel.
 * Connection settings are the standard {@code rabbitmq-*} ones ({@code RABBITMQ_HOST}, ...).
 */
@ApplicationScoped
public class RabbitMqEventPublisher implements EventPublisher {
    private static final Logger LOG = Logger.getLogger(RabbitMqEventPublisher.class);

    private final ConnectionFactory factory = new ConnectionFactory();
    private final String exchange;
    private final Duration confirmTimeout;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(runnable -> {
        Thread t = new Thread(runnable, "ledger-events-rabbitmq");
        t.setDaemon(true);
        return t;
    });
    // Confined to the thread above.
    private Connection connection;
    private Channel channel;
    /** The batch whose confirms the channel is waiting for. */
    private volatile Batch current;

    public RabbitMqEventPublisher(LedgerConfig config,
                                  @ConfigProperty(name = "rabbitmq-host", defaultValue = "localhost") String host,
                                  @ConfigProperty(name = "rabbitmq-port", defaultValue = "5672") int port,
                                  @ConfigProperty(name = "rabbitmq-username", defaultValue = "guest") String username,
                                  @ConfigProperty(name = "rabbitmq-password", defaultValue = "guest") String password,
                                  @ConfigProperty(name = "rabbitmq-virtual-host", defaultValue = "/") String virtualHost) {
        this.exchange = config.events().rabbitmq().exchange();
        this.confirmTimeout = config.events().rabbitmq().confirmTimeout();
        factory.setHost(host);
        factory.setPort(port);
        factory.setUsername(username);
        factory.setPassword(password);
        factory.setVirtualHost(virtualHost);
        // The relay reconnects in its next round; the client's own recovery would resend on its own.
        factory.setAutomaticRecoveryEnabled(false);
        factory.setTopologyRecoveryEnabled(false);
        factory.setConnectionTimeout(5_000);
        factory.setHandshakeTimeout(5_000);
        factory.setRequestedHeartbeat(15);
    }

    @Override
    public Uni<Void> publish(List<OutgoingEvent> events) {
        if (events.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Uni.createFrom().<Void>completionStage(() -> {
                    Batch batch = new Batch(events.size());
                    thread.execute(() -> send(batch, events));
                    return batch.done.whenComplete((ok, failure) -> {
                        if (failure != null) {
                            thread.execute(this::disconnect);
                        }
                    });
                })
                .ifNoItem().after(confirmTimeout).failWith(() -> {
                    Batch batch = current;
                    thread.execute(this::disconnect);
                    return new EventPublishException(batch == null ? 0 : batch.confirmed(),
                            "RabbitMQ confirmed no batch within " + confirmTimeout.toMillis() + " ms", null);
                });
    }

    private void send(Batch batch, List<OutgoingEvent> events) {
        try {
            Channel open = channel();
            batch.start(open, open.getNextPublishSeqNo());
            current = batch;
            for (OutgoingEvent event : events) {
                open.basicPublish(exchange, event.type(), false, properties(event), event.body());
            }
        } catch (Exception | Error e) {
            disconnect();
            batch.fail(e);
        }
    }

    private static AMQP.BasicProperties properties(OutgoingEvent event) {
        return new AMQP.BasicProperties.Builder()
                .messageId(event.eventId().toString())
                .type(event.type())
                .contentType("application/json")
                .deliveryMode(2) // persistent: a confirm then means written to disk in a durable queue
                .build();
    }

    /** The open channel, connecting (and declaring the exchange) first when there is none. */
    private Channel channel() throws Exception {
        if (channel != null && channel.isOpen()) {
            return channel;
        }
        disconnect();
        Connection opened = factory.newConnection("idempotent-ledger events");
        try {
            Channel created = opened.createChannel();
            created.confirmSelect();
            created.exchangeDeclare(exchange, BuiltinExchangeType.TOPIC, true);
            created.addConfirmListener(
                    (tag, multiple) -> {
                        Batch batch = current;
                        if (batch != null && batch.channel == created) {
                            batch.ack(tag, multiple);
                        }
                    },
                    (tag, multiple) -> {
                        Batch batch = current;
                        if (batch != null && batch.channel == created) {
                            batch.fail(new IOException("RabbitMQ refused (nack) message " + tag));
                        }
                    });
            opened.addShutdownListener(cause -> {
                Batch batch = current;
                if (batch != null && batch.channel == created) {
                    batch.fail(cause);
                }
            });
            connection = opened;
            channel = created;
            LOG.infof("Events: connected to RabbitMQ %s:%d (virtual host %s), exchange %s", factory.getHost(),
                    factory.getPort(), factory.getVirtualHost(), exchange);
            return created;
        } catch (Exception | Error e) {
            opened.abort();
            throw e;
        }
    }

    private void disconnect() {
        Connection closing = connection;
        connection = null;
        channel = null;
        if (closing != null) {
            closing.abort(1_000);
        }
    }

    @PreDestroy
    void close() {
        thread.execute(this::disconnect);
        thread.shutdown();
    }

    /** One publish call: which of its messages RabbitMQ confirmed, in publish order. */
    private static final class Batch {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        private final boolean[] acked;
        private Channel channel;
        private long firstTag;
        private int confirmed;

        Batch(int size) {
            this.acked = new boolean[size];
        }

        synchronized void start(Channel channel, long firstTag) {
            this.channel = channel;
            this.firstTag = firstTag;
        }

        synchronized void ack(long tag, boolean multiple) {
            long index = tag - firstTag;
            if (index >= acked.length) {
                return;
            }
            // multiple: every tag up to this one; those before the confirmed prefix are acked already
            for (long i = multiple ? confirmed : Math.max(index, 0); i <= index; i++) {
                acked[(int) i] = true;
            }
            while (confirmed < acked.length && acked[confirmed]) {
                confirmed++;
            }
            if (confirmed == acked.length) {
                done.complete(null);
            }
        }

        synchronized int confirmed() {
            return confirmed;
        }

        synchronized void fail(Throwable cause) {
            if (!done.isDone()) {
                done.completeExceptionally(new EventPublishException(confirmed,
                        "RabbitMQ confirmed " + confirmed + " of " + acked.length + " events: " + cause, cause));
            }
        }
    }
}
