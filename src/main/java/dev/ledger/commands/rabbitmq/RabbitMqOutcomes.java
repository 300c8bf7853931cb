package dev.ledger.commands.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.tracing.TraceParent;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

import static dev.ledger.commands.CommandHeaders.KEY;
import static dev.ledger.commands.CommandHeaders.REPLAYED;
import static dev.ledger.commands.CommandHeaders.STATUS;

/**
 * Everything the RabbitMQ door sends to the broker, each publish confirmed by the broker before the returned
 * {@code Uni} completes: outcome messages to {@code ledger.outcomes} and the command's {@code reply_to}, on a
 * connection of the door's own ({@link RabbitMqLink}). Dead letters are {@link RabbitMqDeadLetters}'.
 *
 * <p>The outcomes' channel is in confirm mode; each publish is remembered by its sequence number until the broker
 * confirms it (or refuses it, or the connection goes, which fails every publish still waiting). Confirms arrive on
 * the client's I/O thread, and the commands they settle are acknowledged together once the confirm is handled
 * ({@link RabbitMqCommands.Consumption}). A publish fails at once, to be tried again with its command's redelivery,
 * while there is no connection, or while four prefetches of publishes wait for confirms (a broker that blocks its
 * publishers, short of memory or disk, confirms nothing; the door gives up on each after
 * {@code ledger.messaging.confirm-timeout}): so the frames queued for a broker that does not read them stay bounded.
 */
@ApplicationScoped
public class RabbitMqOutcomes {
    private static final Logger LOG = Logger.getLogger(RabbitMqOutcomes.class);
    /** The topic exchange outcomes are published to (API.md "Payment commands over RabbitMQ"). */
    static final String EXCHANGE = "ledger.outcomes";

    private final RabbitMqLink link;
    private final boolean enabled;
    private final int maxWaiting;
    private final Tracer tracer;
    /** The channel outcomes are published on; null while not connected. */
    private volatile Publisher current;
    private final RabbitMqLink.Attempts attempts;
    private volatile boolean stopping;

    public RabbitMqOutcomes(RabbitMqLink link, LedgerConfig config, Tracer tracer) {
        this.link = link;
        this.enabled = config.messaging().rabbitmq().enabled();
        this.maxWaiting = 4 * config.messaging().rabbitmq().prefetch();
        this.tracer = tracer;
        this.attempts = link.attempts(this::connect);
    }

    void start(@Observes StartupEvent started) {
        if (enabled) {
            link.thread().execute(this::connect);
        }
    }

    void stop(@Observes ShutdownEvent stopping) {
        this.stopping = true;
        Publisher publisher = current;
        if (publisher != null) {
            RabbitMqLink.close(publisher.channel);
        }
    }

    /** Whether outcomes can be published now. */
    boolean connected() {
        Publisher publisher = current;
        return publisher != null && publisher.channel.isOpen();
    }

    /** On the link's thread: a new connection and channel, or another try later. */
    private void connect() {
        if (stopping || connected()) {
            return;
        }
        Connection connection = null;
        try {
            connection = link.connect("ledger-outcomes");
            com.rabbitmq.client.Channel channel = connection.createChannel();
            link.closesWithItsChannel(channel);
            channel.exchangeDeclare(EXCHANGE, BuiltinExchangeType.TOPIC, true, false, Map.of());
            channel.confirmSelect();
            Publisher publisher = new Publisher(channel);
            channel.addConfirmListener(publisher);
            current = publisher;
            connection.addShutdownListener(cause -> publisher.lost(cause.isInitiatedByApplication() ? null : cause));
            attempts.connected();
        } catch (Exception | Error e) {
            if (connection != null) {
                connection.abort();
            }
            if (attempts.failed()) {
                LOG.warnf("Commands: cannot publish outcomes to RabbitMQ %s (%s); trying again", link.broker(), e.toString());
            }
            attempts.again();
        }
    }

    /**
     * The outcome as a message: exactly the body the HTTP API answers, with the command's
     * {@code correlation_id}; to {@code ledger.outcomes} as {@code <resource>.<status>} ({@code transactions.201}:
     * {@code resource} is the first part of the command's kind), and to {@code reply_to} when the command named a queue.
     */
    Uni<Void> publish(String key, String correlationId, Optional<String> replyTo, String resource, Outcome outcome) {
        boolean replayed = outcome instanceof Outcome.Recorded recorded && recorded.replayed();
        return send(key, correlationId, replyTo, outcome.response(), replayed, resource);
    }

    /** A refusal of a command that could not be read, to its {@code reply_to} only. */
    Uni<Void> reply(String key, String correlationId, Optional<String> replyTo, RecordedResponse refusal) {
        return send(key, correlationId, replyTo, refusal, false, null);
    }

    /** To {@code ledger.outcomes} when {@code resource} is given, and to {@code reply_to} when there is one. */
    private Uni<Void> send(String key, String correlationId, Optional<String> replyTo, RecordedResponse response,
                           boolean replayed, String resource) {
        Map<String, Object> headers = new HashMap<>();
        headers.put(STATUS, response.status());
        if (key != null) {
            headers.put(KEY, key);
        }
        if (replayed) {
            headers.put(REPLAYED, true);
        }
        Uni<Void> toExchange = resource != null
                ? publish(EXCHANGE, resource + "." + response.status(), response, correlationId, headers)
                : Uni.createFrom().voidItem();
        Uni<Void> toReplyQueue = replyTo
                .map(queue -> publish("", queue, response, correlationId, headers))
                .orElse(Uni.createFrom().voidItem());
        return Uni.combine().all().unis(toExchange, toReplyQueue).discardItems();
    }

    /** One message, in the trace of the command when it is recorded (a {@code send} span and its {@code traceparent}). */
    private Uni<Void> publish(String exchange, String routingKey, RecordedResponse response, String correlationId,
                              Map<String, Object> headers) {
        String destination = exchange.isEmpty() ? routingKey : exchange;
        Span span = TraceParent.startProducer(tracer, destination + " publish", TraceParent.current(), "rabbitmq", destination);
        Map<String, Object> sent = headers;
        if (span != null) {
            sent = new HashMap<>(headers);
            sent.put(TraceParent.HEADER, TraceParent.of(span));
        }
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType(response.contentType())
                .deliveryMode(2).correlationId(correlationId).headers(sent).build();
        Uni<Void> confirmed = Uni.createFrom().completionStage(() -> publish(exchange, routingKey, properties, response.body()));
        return span == null ? confirmed : confirmed.onTermination().invoke(span::end);
    }

    /** Sends one message; the future completes when the broker confirmed it. */
    private CompletableFuture<Void> publish(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
        Publisher publisher = current;
        if (publisher == null || !publisher.channel.isOpen()) {
            attempts.again();
            return CompletableFuture.failedFuture(new IOException("not connected to RabbitMQ " + link.broker()));
        }
        return publisher.publish(exchange, routingKey, properties, body);
    }

    /** One channel in confirm mode, and the publishes it waits to hear about. */
    private final class Publisher implements ConfirmListener {
        final com.rabbitmq.client.Channel channel;
        private final ConcurrentNavigableMap<Long, CompletableFuture<Void>> waiting = new ConcurrentSkipListMap<>();

        Publisher(com.rabbitmq.client.Channel channel) {
            this.channel = channel;
        }

        CompletableFuture<Void> publish(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
            if (waiting.size() >= maxWaiting) {
                return CompletableFuture.failedFuture(new IOException(waiting.size() + " outcomes wait for RabbitMQ's confirms"));
            }
            CompletableFuture<Void> confirmed = new CompletableFuture<>();
            synchronized (this) { // the sequence number is the one of the publish that follows it
                long sequence = channel.getNextPublishSeqNo();
                waiting.put(sequence, confirmed);
                try {
                    channel.basicPublish(exchange, routingKey, false, properties, body);
                } catch (IOException | RuntimeException failed) {
                    waiting.remove(sequence);
                    confirmed.completeExceptionally(failed);
                }
            }
            return confirmed;
        }

        @Override
        public void handleAck(long sequence, boolean multiple) {
            RabbitMqCommands.Consumption.settling(() -> settle(sequence, multiple, null));
        }

        @Override
        public void handleNack(long sequence, boolean multiple) {
            settle(sequence, multiple, new IOException("RabbitMQ refused the outcome (nack)"));
        }

        private void settle(long sequence, boolean multiple, Throwable failure) {
            if (multiple) {
                Map<Long, CompletableFuture<Void>> settled = waiting.headMap(sequence, true);
                settled.values().forEach(each -> complete(each, failure));
                settled.clear();
            } else {
                CompletableFuture<Void> one = waiting.remove(sequence);
                if (one != null) {
                    complete(one, failure);
                }
            }
        }

        /** The connection went: every publish still waiting fails, and a new connection is made. */
        void lost(Throwable cause) {
            if (current == this) {
                current = null;
            }
            IOException failure = new IOException("the connection to RabbitMQ closed before the confirm", cause);
            waiting.values().forEach(each -> complete(each, failure));
            waiting.clear();
            if (!stopping) { // closed by the broker, or by this service after a channel error
                if (cause != null) {
                    LOG.warnf("Commands: the outcomes' connection to RabbitMQ %s closed (%s); connecting again", link.broker(),
                            cause.toString());
                }
                attempts.again();
            }
        }
    }

    private static void complete(CompletableFuture<Void> publish, Throwable failure) {
        if (failure == null) {
            publish.complete(null);
        } else {
            publish.completeExceptionally(failure);
        }
    }
}
