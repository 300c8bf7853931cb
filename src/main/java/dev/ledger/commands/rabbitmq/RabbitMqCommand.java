package dev.ledger.commands.rabbitmq;

import dev.ledger.config.LedgerConfig;
import dev.ledger.input.JsonBody;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import dev.ledger.security.ApiKeys;
import dev.ledger.input.JsonMediaType;
import dev.ledger.transaction.Payment;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

import java.util.Optional;

/**
 * A payment command from RabbitMQ, read and checked as the HTTP door checks
 * {@code POST /accounts/{id}/transactions}: the body is a {@link Payment} (the same rules, plus
 * {@code accountId}), the key comes from {@code message_id} (the header's bare form), the client from
 * {@code user_id} (which the broker itself checked against the publishing user). The engine sees the
 * request the HTTP door would build for it ({@link Payment#request}).
 */
record RabbitMqCommand(String client, IdempotencyKey key, String correlationId, Optional<String> replyTo,
                       Payment payment, IdempotentRequest request) {

    /** Thrown for a command that cannot be executed; its problem's slug is the dead-letter's reason. */
    static final class Refused extends RuntimeException {
        final transient ProblemException problem;
        /** Whether the refusal may be answered to {@code reply_to} (not to a caller who is not a client). */
        final boolean answerable;

        Refused(ProblemException problem, boolean answerable) {
            super(problem.getMessage(), null, false, false);
            this.problem = problem;
            this.answerable = answerable;
        }

        String slug() {
            return problem.problem().type().slug();
        }
    }

    /** Reads a delivery; throws {@link Refused}. */
    static RabbitMqCommand read(IncomingRabbitMQMetadata metadata, byte[] payload, ApiKeys keys, LedgerConfig config) {
        String client = client(metadata.getUserId(), keys, config);
        try {
            IdempotencyKey key = IdempotencyKey.parseBare(metadata.getMessageId().orElse(null), "message_id");
            Optional<String> contentType = metadata.getContentType();
            if (contentType.isPresent() && !JsonMediaType.isJson(contentType.get())) {
                throw new ProblemException(ProblemType.INVALID_REQUEST,
                        "A command's content_type must be application/json, not " + contentType.get());
            }
            Payment payment = Payment.inCommand(JsonBody.parse(payload, config.request().maxBodyBytes(), Payment.COMMAND_MEMBERS));
            return new RabbitMqCommand(client, key, metadata.getCorrelationId().orElse(key.value()),
                    metadata.getReplyTo().filter(queue -> !queue.isEmpty()), payment, payment.request(client, key));
        } catch (ProblemException invalid) {
            throw new Refused(invalid, true);
        }
    }

    /** The sender: a configured client, or the one client with authentication switched off. */
    private static String client(Optional<String> userId, ApiKeys keys, LedgerConfig config) {
        if (!config.auth().enabled()) {
            return ApiKeys.DEFAULT_CLIENT;
        }
        if (userId.isEmpty() || !keys.knowsClient(userId.get())) {
            throw new Refused(new ProblemException(ProblemType.UNAUTHORIZED, userId.isEmpty()
                    ? "A command needs user_id, the client id of its broker user"
                    : "user_id names no client this service knows"), false);
        }
        return userId.get();
    }
}
