package dev.ledger.messaging;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.config.LedgerConfig;
import dev.ledger.http.Caller;
import dev.ledger.http.JsonBody;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import dev.ledger.security.ApiKeys;
import dev.ledger.transaction.PostTransactionRequest;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import jakarta.ws.rs.core.MediaType;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * A payment command from the broker, read and checked as the HTTP door checks
 * {@code POST /accounts/{id}/transactions}: the same body rules (strict JSON, members, types,
 * ranges) plus {@code accountId}, the key from {@code message_id} (the header's bare form), the
 * client from {@code user_id} (which the broker itself checked against the publishing user).
 *
 * <p>The engine sees the request the HTTP door would build for it: method, path and the body
 * without {@code accountId}. So a key is one key whichever door its duplicates use: the same
 * client, key, account and fields are the same request.
 */
record PaymentCommand(String client, IdempotencyKey key, String correlationId, Optional<String> replyTo,
                      UUID accountId, PostTransactionRequest body, IdempotentRequest request) {
    static final List<String> MEMBERS;

    static {
        List<String> members = new ArrayList<>(List.of("accountId"));
        members.addAll(PostTransactionRequest.MEMBERS);
        MEMBERS = List.copyOf(members);
    }

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
    static PaymentCommand read(IncomingRabbitMQMetadata metadata, byte[] payload, ApiKeys keys, LedgerConfig config) {
        String client = client(metadata.getUserId(), keys, config);
        try {
            IdempotencyKey key = IdempotencyKey.parseBare(metadata.getMessageId().orElse(null), "message_id");
            Optional<String> contentType = metadata.getContentType();
            if (contentType.isPresent() && !isJson(contentType.get())) {
                throw new ProblemException(ProblemType.INVALID_REQUEST,
                        "A command's content_type must be application/json, not " + contentType.get());
            }
            JsonBody json = JsonBody.parse(payload, config.request().maxBodyBytes(), MEMBERS);
            UUID accountId = accountId(json.requiredString("accountId"));
            PostTransactionRequest body = PostTransactionRequest.from(json);
            ObjectNode fields = ((ObjectNode) json.tree()).deepCopy();
            fields.remove("accountId");
            IdempotentRequest request = IdempotentRequest.of(client, key, "POST",
                    "/accounts/" + accountId + "/transactions", fields);
            return new PaymentCommand(client, key, metadata.getCorrelationId().orElse(key.value()),
                    metadata.getReplyTo().filter(queue -> !queue.isEmpty()), accountId, body, request);
        } catch (ProblemException invalid) {
            throw new Refused(invalid, true);
        }
    }

    /** The sender: a configured client, or {@code default} with authentication switched off. */
    private static String client(Optional<String> userId, ApiKeys keys, LedgerConfig config) {
        if (!config.auth().enabled()) {
            return Caller.DEFAULT_CLIENT;
        }
        if (userId.isEmpty() || !keys.knowsClient(userId.get())) {
            throw new Refused(new ProblemException(ProblemType.UNAUTHORIZED, userId.isEmpty()
                    ? "A command needs user_id, the client id of its broker user"
                    : "user_id names no client this service knows"), false);
        }
        return userId.get();
    }

    private static boolean isJson(String contentType) {
        try {
            MediaType type = MediaType.valueOf(contentType);
            String charset = type.getParameters().get(MediaType.CHARSET_PARAMETER);
            return type.isCompatible(MediaType.APPLICATION_JSON_TYPE) && !type.isWildcardType() && !type.isWildcardSubtype()
                    && (charset == null || charset.equalsIgnoreCase("utf-8"));
        } catch (IllegalArgumentException malformed) {
            return false;
        }
    }

    private static UUID accountId(String value) {
        try {
            UUID id = UUID.fromString(value);
            if (id.toString().equalsIgnoreCase(value)) {
                return id;
            }
        } catch (IllegalArgumentException notAUuid) {
            // below
        }
        throw new ProblemException(ProblemType.INVALID_REQUEST, "'accountId' must be an account's id (a UUID)");
    }
}
