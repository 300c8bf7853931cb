package dev.ledger.commands.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import dev.ledger.commands.Command;
import dev.ledger.commands.CommandDoor;
import dev.ledger.commands.CommandEnvelope;
import dev.ledger.commands.CommandKinds;
import dev.ledger.commands.CommandMetrics;
import dev.ledger.commands.CommandRefused;
import dev.ledger.commands.Delivery;
import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.tracing.CommandSpans;
import dev.ledger.tracing.TraceParent;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * RabbitMQ's adapter to the {@link CommandDoor} (API.md "Payment commands over RabbitMQ"): commands from
 * {@code ledger.commands}, the client from {@code user_id} (which the broker checked against the publishing
 * user), the key from {@code message_id}, the command from the routing key; outcomes to {@code ledger.outcomes}
 * and {@code reply_to} ({@link RabbitMqOutcomes}), dead letters to {@code ledger.commands.dlx} ({@link RabbitMqDeadLetters}); a command tried again is given back to the broker after
 * {@code ledger.messaging.retry-delay}, which counts its deliveries ({@code x-delivery-count}, a quorum queue's);
 * consumption pauses while most commands meet unavailable dependencies ({@link RabbitMqPause}).
 *
 * <p>A consumer of the door's own on RabbitMQ's Java client ({@link RabbitMqLink}), not SmallRye's incoming channel,
 * so that the commands one confirm settles are acknowledged together: the connector acknowledges each message by
 * itself, one write on Vert.x' worker pool per command (docs/performance.md, "RabbitMQ: the door's own client"). It
 * declares what the connector declared, in the same terms: the direct exchange {@code ledger.commands}, the quorum
 * queue {@code ledger.commands} bound to it by every command's routing key, with an explicit delivery limit
 * ({@code ledger.messaging.rabbitmq.delivery-limit}) and dead-lettering to the direct exchange
 * {@code ledger.commands.dlx}, and the queue {@code ledger.commands.dead} bound to that by {@code transactions.post}.
 * It reconnects by itself, declaring again; readiness waits for it ({@link RabbitMqCommandsReadinessCheck}).
 *
 * <p>Each delivery is handed to the door on one event loop's context; how many run at a time is bounded by the
 * channel's prefetch ({@code ledger.messaging.rabbitmq.prefetch}), since every one holds an unacknowledged
 * delivery until it is settled.
 */
@ApplicationScoped
public class RabbitMqCommands {
    private static final Logger LOG = Logger.getLogger(RabbitMqCommands.class);
    /** Quorum queues count a command's earlier deliveries here (absent on the first). */
    static final String DELIVERY_COUNT = "x-delivery-count";
    static final String EXCHANGE = "ledger.commands";
    static final String QUEUE = "ledger.commands";
    static final String DEAD_LETTER_EXCHANGE = "ledger.commands.dlx";
    static final String DEAD_LETTER_QUEUE = "ledger.commands.dead";
    /** Every dead letter is published under it, the dead-letter queue's one binding. */
    static final String DEAD_LETTER_ROUTING_KEY = CommandKinds.DEFAULT;

    private final CommandDoor door;
    private final RabbitMqOutcomes outcomes;
    private final RabbitMqDeadLetters deadLetters;
    private final RabbitMqLink link;
    private final RabbitMqPause pause;
    private final Vertx vertx;
    private final Tracer tracer;
    private final boolean enabled;
    private final int prefetch;
    private final long deliveryLimit;
    private final Duration retryDelay;
    private final Set<String> routingKeys;
    /** Spans are made only while some are recorded (quarkus.otel.traces.sampler.arg above 0, dev.ledger.tracing.TracingSwitch). */
    private final boolean traced;
    /** The event loop every command is handled on. */
    private io.vertx.core.Context loop;
    /** The channel consumed from; null while not connected. */
    private volatile Consumption current;
    private volatile boolean paused;
    private volatile boolean stopping;
    private final RabbitMqLink.Attempts attempts;

    public RabbitMqCommands(CommandDoor door, RabbitMqOutcomes outcomes, RabbitMqDeadLetters deadLetters, RabbitMqLink link,
                            RabbitMqPause pause, Vertx vertx, Tracer tracer, CommandKinds kinds, LedgerConfig config,
                            @ConfigProperty(name = "quarkus.otel.traces.sampler.arg", defaultValue = "0") double samplerRatio) {
        this.door = door;
        this.outcomes = outcomes;
        this.deadLetters = deadLetters;
        this.link = link;
        this.pause = pause;
        this.vertx = vertx;
        this.tracer = tracer;
        this.enabled = config.messaging().rabbitmq().enabled();
        this.prefetch = config.messaging().rabbitmq().prefetch();
        this.deliveryLimit = config.messaging().rabbitmq().deliveryLimit();
        this.retryDelay = config.messaging().retryDelay();
        this.routingKeys = kinds.names();
        this.traced = samplerRatio > 0;
        this.attempts = link.attempts(this::connect);
    }

    void start(@Observes StartupEvent started) {
        if (!enabled) {
            return;
        }
        loop = vertx.getOrCreateContext();
        try {
            // declared before the service is ready, so that commands published once it is are routed
            link.thread().submit(this::connect).get(15, TimeUnit.SECONDS);
        } catch (Exception notYet) {
            LOG.debugf("Commands: not consuming yet (%s)", notYet.toString());
        }
    }

    void stop(@Observes ShutdownEvent stopping) {
        this.stopping = true;
        Consumption consumption = current;
        if (consumption != null) {
            RabbitMqLink.close(consumption.channel);
        }
    }

    /** Whether commands are consumed (or paused) on an open channel. */
    boolean connected() {
        Consumption consumption = current;
        return consumption != null && consumption.channel.isOpen();
    }

    /** On the link's thread: the commands waiting in the queue (the consumer's lag), asked on the consumer's channel. */
    OptionalLong depth() throws IOException {
        Consumption consumption = current;
        return consumption == null || !consumption.channel.isOpen() ? OptionalLong.empty()
                : OptionalLong.of(consumption.channel.messageCount(QUEUE));
    }

    /** Stops consuming: nothing new arrives; what was delivered is still settled. */
    void pause() {
        paused = true;
        link.thread().execute(() -> {
            Consumption consumption = current;
            if (consumption != null && paused) {
                consumption.cancel();
            }
        });
    }

    /** Consumes again after {@link #pause()}. */
    void resume() {
        paused = false;
        link.thread().execute(() -> {
            Consumption consumption = current;
            if (consumption != null && !paused) {
                consumption.consume();
            }
        });
    }

    boolean paused() {
        return paused;
    }

    /** On the link's thread: a connection, the declarations, the consumer; or another try later. */
    private void connect() {
        if (stopping || connected()) {
            return;
        }
        Connection connection = null;
        try {
            connection = link.connect("ledger-commands");
            Channel channel = connection.createChannel();
            link.closesWithItsChannel(channel);
            declare(channel);
            channel.basicQos(prefetch);
            Consumption consumption = new Consumption(channel);
            current = consumption;
            // called at once if the connection closed already
            connection.addShutdownListener(cause -> lost(consumption, cause));
            if (!paused) {
                consumption.consume();
            }
            if (attempts.connected()) {
                LOG.infof("Commands: consuming from RabbitMQ %s again", link.broker());
            }
        } catch (Exception | Error e) {
            if (connection != null) {
                connection.abort();
            }
            if (attempts.failed()) {
                LOG.warnf("Commands: cannot consume from RabbitMQ %s (%s); not ready until it can, trying again",
                        link.broker(), e.toString());
            }
            attempts.again();
        }
    }

    private void declare(Channel channel) throws IOException {
        channel.exchangeDeclare(EXCHANGE, BuiltinExchangeType.DIRECT, true, false, Map.of());
        channel.exchangeDeclare(DEAD_LETTER_EXCHANGE, BuiltinExchangeType.DIRECT, true, false, Map.of());
        Map<String, Object> arguments = new HashMap<>(Map.of("x-queue-type", "quorum",
                "x-dead-letter-exchange", DEAD_LETTER_EXCHANGE, "x-dead-letter-routing-key", DEAD_LETTER_ROUTING_KEY));
        if (deliveryLimit > 0) { // 0: none declared, for a queue an earlier version declared without one
            arguments.put("x-delivery-limit", deliveryLimit);
        }
        channel.queueDeclare(QUEUE, true, false, false, arguments);
        for (String routingKey : routingKeys) {
            channel.queueBind(QUEUE, EXCHANGE, routingKey);
        }
        channel.queueDeclare(DEAD_LETTER_QUEUE, true, false, false, Map.of());
        channel.queueBind(DEAD_LETTER_QUEUE, DEAD_LETTER_EXCHANGE, DEAD_LETTER_ROUTING_KEY);
    }

    private void lost(Consumption consumption, ShutdownSignalException cause) {
        if (current == consumption) {
            current = null;
        }
        if (!stopping) {
            if (!cause.isInitiatedByApplication()) {
                LOG.warnf("Commands: the connection to RabbitMQ %s closed (%s); connecting again", link.broker(), cause.toString());
            }
            attempts.again();
        }
    }

    /**
     * One channel consumed from, and its deliveries not yet settled. The door settles each delivery once; the
     * settled ones are acknowledged with one {@code basicAck} with {@code multiple} for the oldest run of them, so
     * that the commands one confirm settled take one acknowledgement (while a confirm is handled, see
     * {@link #settling}; otherwise at once). A settled delivery behind one that is not is acknowledged by itself once
     * a quarter of the prefetch waits so, so that a slow command never holds the others' acknowledgements for long.
     * Delivery tags belong to their channel: after a reconnection the old channel's deliveries are the broker's
     * again, and their acknowledgements fail (logged; the broker redelivers them, and they replay).
     */
    final class Consumption extends DefaultConsumer {
        /** The consumptions to acknowledge for, while this thread handles a confirm. */
        private static final ThreadLocal<Set<Consumption>> SETTLING = new ThreadLocal<>();

        final Channel channel;
        private final AckPlan plan = new AckPlan(prefetch / 4);
        private String consumerTag;

        Consumption(Channel channel) {
            super(channel);
            this.channel = channel;
        }

        /** Runs {@code confirms}, then sends the acknowledgements they settled, together. */
        static void settling(Runnable confirms) {
            Set<Consumption> touched = new LinkedHashSet<>();
            SETTLING.set(touched);
            try {
                confirms.run();
            } finally {
                SETTLING.remove();
                touched.forEach(Consumption::acknowledgeSettled);
            }
        }

        /** On the link's thread. */
        void consume() {
            try {
                if (consumerTag == null) {
                    consumerTag = channel.basicConsume(QUEUE, false, this);
                }
            } catch (IOException | RuntimeException e) {
                LOG.warnf("Commands: cannot consume from %s (%s)", QUEUE, e.toString());
                channel.getConnection().abort();
            }
        }

        /** On the link's thread. */
        void cancel() {
            try {
                if (consumerTag != null) {
                    channel.basicCancel(consumerTag);
                    consumerTag = null;
                }
            } catch (IOException | RuntimeException e) {
                LOG.debugf("Commands: cancelling the consumer failed (%s)", e.toString());
            }
        }

        @Override
        public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
            long deliveryTag = envelope.getDeliveryTag();
            synchronized (this) {
                plan.delivered(deliveryTag);
            }
            Context received = traced
                    ? CommandSpans.received(tracer, header(properties, TraceParent.HEADER), CommandMetrics.RABBITMQ, QUEUE) : null;
            door.run(new RabbitMqDelivery(this, deliveryTag, envelope.getRoutingKey(), properties, body, received), loop);
        }

        /** The broker cancelled the consumer (its queue deleted, say): a new connection declares it again. */
        @Override
        public void handleCancel(String tag) {
            LOG.warnf("Commands: RabbitMQ cancelled the consumer of %s; connecting again", QUEUE);
            link.thread().execute(() -> channel.getConnection().abort());
        }

        void acknowledge(long deliveryTag) {
            synchronized (this) {
                if (!plan.settle(deliveryTag)) {
                    return;
                }
            }
            Set<Consumption> settling = SETTLING.get();
            if (settling != null) {
                settling.add(this);
            } else {
                acknowledgeSettled();
            }
        }

        /** Gives the delivery back to the broker, which delivers it again. */
        synchronized void requeue(long deliveryTag) {
            if (plan.forget(deliveryTag)) {
                try {
                    channel.basicReject(deliveryTag, true);
                } catch (IOException | RuntimeException lost) {
                    LOG.debugf("Commands: a requeue was lost (%s); the broker redelivers", lost.toString());
                }
                acknowledgeSettled();
            }
        }

        /** What {@link AckPlan} says is owed: the oldest run of settled deliveries in one acknowledgement. */
        private synchronized void acknowledgeSettled() {
            AckPlan.Acks acks = plan.take();
            if (acks.none()) {
                return;
            }
            try {
                if (acks.upTo() >= 0) {
                    channel.basicAck(acks.upTo(), true);
                }
                for (long single : acks.singles()) {
                    channel.basicAck(single, false);
                }
            } catch (IOException | RuntimeException lost) {
                LOG.warnf("A command's acknowledgement was lost (%s); the broker redelivers it and it replays", lost.toString());
            }
        }
    }

    private static String header(AMQP.BasicProperties properties, String name) {
        Map<String, Object> headers = properties.getHeaders();
        Object value = headers == null ? null : headers.get(name);
        return value == null ? null : value.toString();
    }

    private final class RabbitMqDelivery implements Delivery {
        private final Consumption consumption;
        private final long deliveryTag;
        private final String routingKey;
        private final AMQP.BasicProperties properties;
        private final byte[] body;
        private final Context received;

        RabbitMqDelivery(Consumption consumption, long deliveryTag, String routingKey, AMQP.BasicProperties properties,
                         byte[] body, Context received) {
            this.consumption = consumption;
            this.deliveryTag = deliveryTag;
            this.routingKey = routingKey;
            this.properties = properties;
            this.body = body;
            this.received = received;
        }

        @Override
        public String transport() {
            return CommandMetrics.RABBITMQ;
        }

        @Override
        public String destination() {
            return QUEUE;
        }

        @Override
        public Context received() {
            return received;
        }

        @Override
        public CommandEnvelope envelope() {
            // published straight into the queue (the default exchange), a command is a payment, as it always was
            return new CommandEnvelope(properties.getUserId(), QUEUE.equals(routingKey) ? null : routingKey, "message_id",
                    properties.getMessageId(), properties.getCorrelationId(), properties.getContentType(), body, null);
        }

        @Override
        public int firstAttempt() {
            Map<String, Object> headers = properties.getHeaders();
            Object count = headers == null ? null : headers.get(DELIVERY_COUNT);
            return (int) Math.min(Integer.MAX_VALUE, (count instanceof Number number ? number.longValue() : 0L) + 1);
        }

        @Override
        public Uni<Void> publish(Command command, Outcome outcome) {
            return outcomes.publish(command.key().value(), command.correlationId(), replyTo(),
                    command.kind().substring(0, command.kind().indexOf('.')), outcome);
        }

        @Override
        public Uni<Void> refuse(CommandRefused refused, RecordedResponse problem) {
            return outcomes.reply(refused.key(), refused.correlationId(), replyTo(), problem);
        }

        private Optional<String> replyTo() {
            return Optional.ofNullable(properties.getReplyTo()).filter(queue -> !queue.isEmpty());
        }

        @Override
        public Uni<Void> deadLetter(String slug) {
            return deadLetters.send(properties, routingKey, body, slug);
        }

        /**
         * The acknowledgement, the last step of a settled command: nothing after it may requeue the same
         * delivery. If the ack is lost, the broker redelivers, and the redelivery replays.
         */
        @Override
        public Uni<Void> acknowledge() {
            consumption.acknowledge(deliveryTag);
            return Uni.createFrom().voidItem();
        }

        /**
         * After the back-off, gives the delivery back to the broker for redelivery (it stays unacknowledged, and
         * counted in the prefetch, meanwhile).
         */
        @Override
        public Uni<Boolean> retry(int attempt) {
            return Uni.createFrom().voidItem().onItem().delayIt().by(retryDelay).map(ignored -> {
                consumption.requeue(deliveryTag);
                return false;
            });
        }

        @Override
        public void unavailable(String client) {
            pause.unavailable(client);
        }

        @Override
        public void available(String client) {
            pause.available(client);
        }
    }
}
