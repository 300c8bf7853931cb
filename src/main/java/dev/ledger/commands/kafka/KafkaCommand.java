package dev.ledger.commands.kafka;

import dev.ledger.commands.CommandHeaders;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.input.JsonBody;
import dev.ledger.input.JsonMediaType;
import dev.ledger.input.Uuids;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import dev.ledger.transaction.Payment;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.UUID;

/**
 * A payment command from a Kafka record, read and checked as the HTTP door checks
 * {@code POST /accounts/{id}/transactions}: the value is a {@link Payment} (the same rules, plus
 * {@code accountId}), which the record key must name too; the key comes from the header
 * {@code idempotency-key} (the header's bare form), the correlation from {@code correlation-id} (the key
 * when absent), the client from the topic ({@link KafkaTopics}). Header values are UTF-8.
 *
 * @param client        the client the engine runs the command for
 * @param topicClient   the client its topic names: where its outcome goes
 */
record KafkaCommand(String client, String topicClient, IdempotencyKey key, String correlationId, Payment payment,
                    IdempotentRequest request) {
    static final String KEY = CommandHeaders.KEY;
    static final String CORRELATION = "correlation-id";
    static final String CONTENT_TYPE = "content-type";

    /** Thrown for a record that cannot be executed; its problem's slug is the dead letter's reason. */
    static final class Refused extends RuntimeException {
        final transient ProblemException problem;
        /** The client whose outcome topic gets the 400, if the refusal may be answered (not an unknown client's). */
        final String answerTo;
        final String key;
        final String correlationId;

        Refused(ProblemException problem, String answerTo, String key, String correlationId) {
            super(problem.getMessage(), null, false, false);
            this.problem = problem;
            this.answerTo = answerTo;
            this.key = key;
            this.correlationId = correlationId;
        }

        String slug() {
            return problem.problem().type().slug();
        }
    }

    /**
     * Reads a record of {@code topicClient}'s topic for the engine's {@code client} (the same, or the one
     * client of a service without authentication); throws {@link Refused}.
     */
    static KafkaCommand read(String topicClient, String client, byte[] recordKey, byte[] value, Headers headers, int maxBodyBytes) {
        String keyText = null;
        String correlationId = null;
        try {
            // the correlation first: a refusal for anything else wrong with the record still names it
            correlationId = single(headers, CORRELATION);
            keyText = single(headers, KEY);
            IdempotencyKey key = IdempotencyKey.parseBare(keyText, KEY);
            if (correlationId == null) {
                correlationId = key.value();
            }
            String contentType = single(headers, CONTENT_TYPE);
            if (contentType != null && !JsonMediaType.isJson(contentType)) {
                throw invalid("A command's content-type must be application/json, not " + contentType);
            }
            Payment payment = Payment.inCommand(JsonBody.parse(value, maxBodyBytes, Payment.COMMAND_MEMBERS));
            UUID accountInKey = recordKey == null ? null : Uuids.parse(new String(recordKey, StandardCharsets.UTF_8)).orElse(null);
            if (!payment.accountId().equals(accountInKey)) {
                throw invalid("The record key must be the command's accountId, " + payment.accountId());
            }
            return new KafkaCommand(client, topicClient, key, correlationId, payment, payment.request(client, key));
        } catch (ProblemException invalid) {
            throw new Refused(invalid, topicClient, keyText, correlationId == null ? keyText : correlationId);
        }
    }

    /** A header's value, or null when absent; a header given twice is refused, as over HTTP. */
    private static String single(Headers headers, String name) {
        Iterator<Header> values = headers.headers(name).iterator();
        if (!values.hasNext()) {
            return null;
        }
        byte[] value = values.next().value();
        if (values.hasNext()) {
            throw name.equals(KEY)
                    ? new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID, "The header '" + KEY + "' must be given once")
                    : invalid("The header '" + name + "' must be given at most once");
        }
        if (value == null) {
            return null;
        }
        try {
            return utf8(value);
        } catch (CharacterCodingException e) {
            throw name.equals(KEY)
                    ? new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID, "The header '" + KEY + "' is not visible ASCII")
                    : invalid("The header '" + name + "' is not valid UTF-8");
        }
    }

    private static String utf8(byte[] bytes) throws CharacterCodingException {
        return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
    }

    private static ProblemException invalid(String detail) {
        return new ProblemException(ProblemType.INVALID_REQUEST, detail);
    }
}
