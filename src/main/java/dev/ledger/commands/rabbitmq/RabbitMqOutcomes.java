package dev.ledger.commands.rabbitmq;

import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.RecordedResponse;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static dev.ledger.commands.CommandHeaders.KEY;
import static dev.ledger.commands.CommandHeaders.PROBLEM;
import static dev.ledger.commands.CommandHeaders.REPLAYED;
import static dev.ledger.commands.CommandHeaders.STATUS;

/**
 * Everything the RabbitMQ door sends to the broker, each publish confirmed by the broker before
 * the returned {@code Uni} completes (publisher confirms on every channel): outcome messages to
 * {@code ledger.outcomes} and the command's {@code reply_to}, and dead-lettered commands.
 */
@ApplicationScoped
public class RabbitMqOutcomes {
    /** The dead-lettered copy cannot carry user_id: the broker checks it against this service's user. */
    static final String SENDER = "x-ledger-user-id";

    private final MutinyEmitter<byte[]> outcomes;
    private final MutinyEmitter<byte[]> replies;
    private final MutinyEmitter<byte[]> deadLetters;

    /** The command a dead letter was ({@code transfers.create}, ...): its routing key, which the dead letter cannot keep. */
    static final String COMMAND = "ledger-command";

    private final String deadLetterRoutingKey;

    public RabbitMqOutcomes(@Channel("outcomes") MutinyEmitter<byte[]> outcomes,
                            @Channel("replies") MutinyEmitter<byte[]> replies,
                            @Channel("dead-letters") MutinyEmitter<byte[]> deadLetters,
                            @ConfigProperty(name = "mp.messaging.incoming.commands.dead-letter-routing-key") String deadLetterRoutingKey) {
        this.outcomes = outcomes;
        this.replies = replies;
        this.deadLetters = deadLetters;
        this.deadLetterRoutingKey = deadLetterRoutingKey;
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
                ? outcomes.sendMessage(message(response, correlationId, headers, resource + "." + response.status()))
                : Uni.createFrom().voidItem();
        Uni<Void> toReplyQueue = replyTo
                .map(queue -> replies.sendMessage(message(response, correlationId, headers, queue)))
                .orElse(Uni.createFrom().voidItem());
        return Uni.combine().all().unis(toExchange, toReplyQueue).discardItems();
    }

    private static Message<byte[]> message(RecordedResponse response, String correlationId, Map<String, Object> headers,
                                           String routingKey) {
        OutgoingRabbitMQMetadata.Builder metadata = new OutgoingRabbitMQMetadata.Builder()
                .withRoutingKey(routingKey)
                .withContentType(response.contentType())
                .withDeliveryMode(2)
                .withHeaders(headers);
        if (correlationId != null) {
            metadata.withCorrelationId(correlationId);
        }
        return Message.of(response.body(), Metadata.of(metadata.build()));
    }

    /**
     * The command as it arrived (body, properties, headers), to the dead-letter exchange, with the reason as
     * {@code x-ledger-problem} and its routing key (the command it was) as {@code ledger-command}. Published under the
     * dead-letter queue's own routing key, the one binding of the direct exchange {@code ledger.commands.dlx}: under
     * the command's routing key, a transfer's dead letter would be routed nowhere and dropped by the broker.
     */
    Uni<Void> deadLetter(IncomingRabbitMQMetadata command, byte[] body, String problemSlug) {
        Map<String, Object> headers = new HashMap<>(command.getHeaders());
        headers.put(PROBLEM, problemSlug);
        headers.put(COMMAND, command.getRoutingKey());
        command.getUserId().ifPresent(user -> headers.put(SENDER, user));
        OutgoingRabbitMQMetadata.Builder metadata = new OutgoingRabbitMQMetadata.Builder()
                .withRoutingKey(deadLetterRoutingKey)
                .withDeliveryMode(2)
                .withHeaders(headers);
        command.getContentType().ifPresent(metadata::withContentType);
        command.getMessageId().ifPresent(metadata::withMessageId);
        command.getCorrelationId().ifPresent(metadata::withCorrelationId);
        command.getReplyTo().ifPresent(metadata::withReplyTo);
        return deadLetters.sendMessage(Message.of(body == null ? new byte[0] : body, Metadata.of(metadata.build())));
    }
}
