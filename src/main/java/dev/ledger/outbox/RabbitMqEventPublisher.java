package dev.ledger.outbox;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.ledger.config.LedgerConfig;
import dev.ledger.config.RabbitMqConnection;
import dev.ledger.tracing.TraceParent;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes events to the topic exchange {@code ledger.events.rabbitmq.exchange} (durable), routing
 * key = the event's type, {@code message_id} = its id, persistent, on a channel in confirm mode: a
 * batch completes when RabbitMQ has confirmed every message.
 *
 * <p>The exchange, and the durable queue {@code ledger.events.rabbitmq.queue} bound to it with
 * {@code #}, are declared at start (tried again until the broker takes them; readiness waits for it,
 * {@link RabbitMqEventsReadinessCheck}) and again on every new connection. A consumer can then bind as soon
 * as the service is ready, and events published before any consumer bound wait in that queue instead
 * of being dropped by an exchange with no binding. A queue of that name that exists already (an
 * operator's own, quorum say) is bound as it is, not declared again.
 *
 * <p>RabbitMQ's Java client directly, not SmallRye's outgoing channel: that channel's publisher queues
 * what it could not send and sends it after a reconnect by itself, and forgets the confirms it awaited
 * when the channel changes. Neither suits an outbox, whose retries must be the relay's alone, in order.
 * Here nothing is kept: not connected means failing at once, and any failure closes the connection, so
 * that late confirms of an abandoned batch can never be taken for the next one's.
 *
 * <p>The client's calls block (a socket write, RabbitMQ's flow control), so they run on one thread of
 * their own, never on an event loop; one thread also keeps a batch in order on its one channel.
 * Connection settings are the standard {@code rabbitmq-*} ones ({@link RabbitMqConnection}).
 */
@ApplicationScoped
public class RabbitMqEventPublisher implements EventPublisher {
    private static final Logger LOG = Logger.getLogger(RabbitMqEventPublisher.class);

    /** The first wait before declaring again after the broker refused or was away; doubled up to {@link #MAX_RETRY}. */
    private static final Duration FIRST_RETRY = Duration.ofMillis(250);
    private static final Duration MAX_RETRY = Duration.ofSeconds(5);

    private final ConnectionFactory factory;
    private final String broker;
    private final boolean enabled;
    private final String exchange;
    private final Optional<String> queue;
    private final Duration confirmTimeout;
    private final Tracer tracer;
    private final ScheduledThreadPoolExecutor thread = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread t = new Thread(runnable, "ledger-events-rabbitmq");
        t.setDaemon(true);
        return t;
    });
    // Confined to the thread above.
    private Connection connection;
    private Channel channel;
    /** The batch whose confirms the channel is waiting for. */
    private volatile Batch current;
    /** The end of the last batch handed to {@link #publish}: the next one is sent after it. */
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
    /** The exchange (and the queue) have been declared since the start. */
    private volatile boolean declared;
    private int failedDeclarations;

    public RabbitMqEventPublisher(LedgerConfig config, RabbitMqConnection connection, Tracer tracer) {
        this.tracer = tracer;
        this.enabled = config.events().rabbitmq().enabled();
        this.exchange = config.events().rabbitmq().exchange();
        this.queue = config.events().rabbitmq().queue().filter(name -> !name.isBlank());
        this.confirmTimeout = config.events().rabbitmq().confirmTimeout();
        // made when events are on: the connection settings are read only then
        this.factory = enabled ? connection.factory() : new ConnectionFactory();
        this.broker = enabled ? connection.describe() : "none";
        // The relay reconnects in its next round: the client's own recovery (off) would resend on its own.
        factory.setConnectionTimeout(5_000);
        factory.setHandshakeTimeout(5_000);
        factory.setRequestedHeartbeat(15);
        // a declaration waiting to be tried again is dropped at shutdown
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    void declareAtStart(@Observes StartupEvent started) {
        if (enabled) {
            thread.execute(this::declare);
        }
    }

    /** Whether the exchange (and the queue) were declared since the start: readiness waits for it. */
    public boolean declared() {
        return declared;
    }

    /** The queue events wait in for consumers, if one is declared. */
    public Optional<String> queue() {
        return queue;
    }

    /** On the thread: connects (which declares), or tries again later while the broker refuses or is away. */
    private void declare() {
        if (declared || thread.isShutdown()) {
            return;
        }
        try {
            channel();
        } catch (Exception | Error e) {
            long wait = Math.min(MAX_RETRY.toMillis(), FIRST_RETRY.toMillis() << Math.min(failedDeclarations++, 10));
            if (failedDeclarations == 1) {
                LOG.warnf("Events: cannot declare exchange %s on RabbitMQ %s (%s); not ready until it can, trying again",
                        exchange, broker, e.toString());
            }
            thread.schedule(this::declare, wait, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public String destination() {
        return "rabbitmq";
    }

    @Override
    public boolean enabled() {
        return enabled;
    }

    /**
     * Publishes one batch at a time: the confirms of the channel are told to the batch in flight ({@code current}),
     * so a batch waits for the one before it to end (with several shards, a relay per shard shares this publisher).
     * Its time bound counts from the call, the wait included.
     */
    @Override
    public Uni<Void> publish(List<OutgoingEvent> events) {
        if (events.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Uni.createFrom().deferred(() -> {
            Batch batch = new Batch(events.size());
            return Uni.createFrom().<Void>completionStage(() -> {
                        after(batch).whenComplete((ignored, failed) -> thread.execute(() -> send(batch, events)));
                        return batch.done.whenComplete((ok, failure) -> {
                            if (failure != null) {
                                thread.execute(this::disconnect);
                            }
                        });
                    })
                    .ifNoItem().after(confirmTimeout).failWith(() -> {
                        EventPublishException timedOut = new EventPublishException(batch.confirmed(),
                                "RabbitMQ confirmed no batch within " + confirmTimeout.toMillis() + " ms", null);
                        batch.fail(timedOut); // ended: the next batch goes on a new channel
                        thread.execute(this::disconnect);
                        return timedOut;
                    });
        });
    }

    /** The end of the batch before {@code batch}; {@code batch} is the last from now on. */
    private synchronized CompletableFuture<Void> after(Batch batch) {
        CompletableFuture<Void> previous = last;
        last = batch.done.handle((ok, failure) -> null);
        return previous;
    }

    private void send(Batch batch, List<OutgoingEvent> events) {
        if (batch.done.isDone()) {
            return; // timed out waiting for the batch before it: its relay publishes its events again
        }
        try {
            Channel open = channel();
            batch.start(open, open.getNextPublishSeqNo());
            current = batch;
            for (OutgoingEvent event : events) {
                // the publish, in the trace of the request that produced the event, when it was traced
                Span span = TraceParent.startProducer(tracer, exchange + " publish", event.traceParent(), "rabbitmq", exchange);
                try {
                    open.basicPublish(exchange, event.type(), false, properties(event, span), event.body());
                } finally {
                    if (span != null) {
                        span.end();
                    }
                }
            }
        } catch (Exception | Error e) {
            disconnect();
            batch.fail(e);
        }
    }

    private static AMQP.BasicProperties properties(OutgoingEvent event, Span span) {
        return new AMQP.BasicProperties.Builder()
                .messageId(event.eventId().toString())
                .type(event.type())
                .contentType("application/json")
                .deliveryMode(2) // persistent: a confirm then means written to disk in a durable queue
                .headers(span == null ? null : Map.of(TraceParent.HEADER, TraceParent.of(span)))
                .build();
    }

    /** The open channel, connecting (and declaring the exchange and the queue) first when there is none. */
    private Channel channel() throws Exception {
        if (channel != null && channel.isOpen()) {
            return channel;
        }
        disconnect();
        Connection opened = factory.newConnection("idempotent-ledger events");
        try {
            declareTopology(opened);
            Channel created = opened.createChannel();
            created.confirmSelect();
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
            if (!declared) {
                declared = true;
                LOG.infof("Events: connected to RabbitMQ %s, exchange %s%s", broker, exchange,
                        queue.map(name -> ", queue " + name + " bound to every event").orElse(", no queue of the service's own"));
            }
            return created;
        } catch (Exception | Error e) {
            opened.abort();
            throw e;
        }
    }

    /**
     * The exchange, and the queue bound to every routing key. The queue is declared only when missing
     * (a passive declaration on a channel of its own, which RabbitMQ closes when the queue is not
     * there), so that one an operator declared otherwise is used as it is.
     */
    private void declareTopology(Connection opened) throws IOException, TimeoutException {
        try (Channel declaring = opened.createChannel()) {
            declaring.exchangeDeclare(exchange, BuiltinExchangeType.TOPIC, true);
        }
        if (queue.isEmpty()) {
            return;
        }
        String name = queue.get();
        Channel probing = opened.createChannel();
        try {
            probing.queueDeclarePassive(name);
            probing.close();
        } catch (IOException missing) {
            try (Channel declaring = opened.createChannel()) {
                declaring.queueDeclare(name, true, false, false, null);
            }
        }
        try (Channel binding = opened.createChannel()) {
            binding.queueBind(name, exchange, "#");
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
