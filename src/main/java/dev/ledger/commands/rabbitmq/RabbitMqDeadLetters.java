package dev.ledger.commands.rabbitmq;

import com.rabbitmq.client.AMQP;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static dev.ledger.commands.CommandHeaders.PROBLEM;

/**
 * Dead-lettered commands, through SmallRye's channel {@code dead-letters} (publisher confirms on): rare, so the
 * connector's per-message costs do not matter here, and a channel of the connector's keeps Dev Services starting a
 * broker for the door where Docker runs. Made at the first dead letter: with commands switched off, the channel is
 * disabled and has no emitter to give.
 */
@ApplicationScoped
public class RabbitMqDeadLetters {
    /** The dead-lettered copy cannot carry user_id: the broker checks it against this service's user. */
    static final String SENDER = "x-ledger-user-id";
    /** The command a dead letter was ({@code transfers.create}, ...): its routing key, which the dead letter cannot keep. */
    static final String COMMAND = "ledger-command";

    private final MutinyEmitter<byte[]> deadLetters;

    public RabbitMqDeadLetters(@Channel("dead-letters") MutinyEmitter<byte[]> deadLetters) {
        this.deadLetters = deadLetters;
    }

    /**
     * The command as it arrived (body, properties, headers), to the dead-letter exchange, with the reason as
     * {@code x-ledger-problem} and its routing key (the command it was) as {@code ledger-command}. Published under the
     * dead-letter queue's own routing key, the one binding of the direct exchange {@code ledger.commands.dlx}: under
     * the command's routing key, a transfer's dead letter would be routed nowhere and dropped by the broker.
     */
    Uni<Void> send(AMQP.BasicProperties command, String routingKey, byte[] body, String problemSlug) {
        Map<String, Object> headers = command.getHeaders() == null ? new HashMap<>() : new HashMap<>(command.getHeaders());
        headers.put(PROBLEM, problemSlug);
        headers.put(COMMAND, routingKey);
        if (command.getUserId() != null) {
            headers.put(SENDER, command.getUserId());
        }
        OutgoingRabbitMQMetadata.Builder metadata = new OutgoingRabbitMQMetadata.Builder()
                .withRoutingKey(RabbitMqCommands.DEAD_LETTER_ROUTING_KEY)
                .withDeliveryMode(2)
                .withHeaders(headers);
        Optional.ofNullable(command.getContentType()).ifPresent(metadata::withContentType);
        Optional.ofNullable(command.getMessageId()).ifPresent(metadata::withMessageId);
        Optional.ofNullable(command.getCorrelationId()).ifPresent(metadata::withCorrelationId);
        Optional.ofNullable(command.getReplyTo()).ifPresent(metadata::withReplyTo);
        return deadLetters.sendMessage(Message.of(body == null ? new byte[0] : body, Metadata.of(metadata.build())));
    }

}
