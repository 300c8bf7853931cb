package dev.ledger.commands.rabbitmq;

import dev.ledger.commands.Command;
import dev.ledger.commands.CommandDoor;
import dev.ledger.commands.CommandEnvelope;
import dev.ledger.commands.CommandMetrics;
import dev.ledger.commands.CommandRefused;
import dev.ledger.commands.Delivery;
import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.RecordedResponse;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * RabbitMQ's adapter to the {@link CommandDoor} (API.md "Payment commands over RabbitMQ"): commands from
 * {@code ledger.commands}, the client from {@code user_id} (which the broker checked against the publishing
 * user), the key from {@code message_id}, the command from the routing key; outcomes to {@code ledger.outcomes}
 * and {@code reply_to} ({@link RabbitMqOutcomes}); a command tried again is given back to the broker after
 * {@code ledger.messaging.retry-delay}, which counts its deliveries ({@code x-delivery-count}, a quorum queue's);
 * consumption pauses while most commands meet unavailable dependencies ({@link RabbitMqPause}). The method hands
 * each delivery to the door and returns at once: how many run at a time is bounded by the broker's prefetch
 * ({@code ledger.messaging.rabbitmq.prefetch}), since every one holds an unacknowledged delivery until it is settled.
 */
@ApplicationScoped
public class RabbitMqCommands {
    private static final Logger LOG = Logger.getLogger(RabbitMqCommands.class);
    /** Quorum queues count a command's earlier deliveries here (absent on the first). */
    static final String DELIVERY_COUNT = "x-delivery-count";
    /** The queue commands are consumed from (mp.messaging.incoming.commands.queue.name), as traces name it. */
    private static final String QUEUE = "ledger.commands";

    private final CommandDoor door;
    private final RabbitMqOutcomes outcomes;
    private final RabbitMqPause pause;
    private final Duration retryDelay;

    public RabbitMqCommands(CommandDoor door, RabbitMqOutcomes outcomes, RabbitMqPause pause, LedgerConfig config) {
        this.door = door;
        this.outcomes = outcomes;
        this.pause = pause;
        this.retryDelay = config.messaging().retryDelay();
    }

    @Incoming("commands")
    public CompletionStage<Void> consume(Message<byte[]> message) {
        door.run(new RabbitMqDelivery(message, message.getMetadata(IncomingRabbitMQMetadata.class).orElseThrow()));
        return CompletableFuture.completedFuture(null);
    }

    private final class RabbitMqDelivery implements Delivery {
        private final Message<byte[]> message;
        private final IncomingRabbitMQMetadata metadata;

        RabbitMqDelivery(Message<byte[]> message, IncomingRabbitMQMetadata metadata) {
            this.message = message;
            this.metadata = metadata;
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
        public Message<?> message() {
            return message;
        }

        @Override
        public CommandEnvelope envelope() {
            // published straight into the queue (the default exchange), a command is a payment, as it always was
            String routingKey = metadata.getRoutingKey();
            return new CommandEnvelope(metadata.getUserId().orElse(null), QUEUE.equals(routingKey) ? null : routingKey, "message_id",
                    metadata.getMessageId().orElse(null), metadata.getCorrelationId().orElse(null),
                    metadata.getContentType().orElse(null), message.getPayload(), null);
        }

        @Override
        public int firstAttempt() {
            return (int) Math.min(Integer.MAX_VALUE,
                    metadata.getHeader(DELIVERY_COUNT, Number.class).map(Number::longValue).orElse(0L) + 1);
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
            return metadata.getReplyTo().filter(queue -> !queue.isEmpty());
        }

        @Override
        public Uni<Void> deadLetter(String slug) {
            return outcomes.deadLetter(metadata, message.getPayload(), slug);
        }

        /**
         * The acknowledgement, the last step of a settled command: nothing after it may requeue the same
         * delivery (a second settlement of one delivery closes the broker channel). If the ack is lost, the
         * broker redelivers, and the redelivery replays.
         */
        @Override
        public Uni<Void> acknowledge() {
            return Uni.createFrom().completionStage(message::ack).onFailure().recoverWithItem(lost -> {
                LOG.warnf("A command's acknowledgement was lost (%s); the broker redelivers it and it replays", lost.toString());
                return null;
            });
        }

        /**
         * After the back-off, gives the delivery back to the broker for redelivery (it stays unacknowledged, and
         * counted in the prefetch, meanwhile). The connector's own nack would do the same but log a warning for
         * every command it requeues; a requeue here is an expected step, counted in the metrics instead.
         */
        @Override
        public Uni<Boolean> retry(int attempt) {
            return Uni.createFrom().voidItem().onItem().delayIt().by(retryDelay).chain(() -> {
                if (message instanceof IncomingRabbitMQMessage<?> delivery) {
                    delivery.rejectMessage(REQUEUED, true);
                    return Uni.createFrom().item(false);
                }
                return Uni.createFrom().completionStage(() -> message.nack(REQUEUED, Metadata.of(new RabbitMQRejectMetadata(true))))
                        .replaceWith(false);
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

    /** Why a command was given back to the broker; not an error. */
    private static final RuntimeException REQUEUED = new RuntimeException("requeued", null, false, false) {
    };
}
