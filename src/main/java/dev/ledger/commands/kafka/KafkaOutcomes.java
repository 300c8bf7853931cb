package dev.ledger.commands.kafka;

import dev.ledger.commands.CommandHeaders;
import dev.ledger.idempotency.RecordedResponse;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import java.nio.charset.StandardCharsets;

import static dev.ledger.commands.CommandHeaders.PROBLEM;
import static dev.ledger.commands.CommandHeaders.REPLAYED;
import static dev.ledger.commands.CommandHeaders.STATUS;

/**
 * Everything the Kafka door produces, each record acknowledged by the broker ({@code acks=all}, the
 * idempotent producer) before the returned {@code Uni} completes: outcomes to
 * {@code ledger.outcomes.<client-id>}, keyed by account id, and copies of unreadable records to
 * {@code ledger.dead.commands}.
 */
@ApplicationScoped
public class KafkaOutcomes {
    static final String CONTENT_TYPE = "content-type";
    /** The client whose topic a dead-lettered record came from. */
    static final String CLIENT = "x-ledger-client";

    private final MutinyEmitter<byte[]> outcomes;

    public KafkaOutcomes(@Channel("kafka-outcomes") MutinyEmitter<byte[]> outcomes) {
        this.outcomes = outcomes;
    }

    /**
     * An answer as a record to {@code client}'s outcome topic, keyed as the command's record was: exactly the body the
     * HTTP API answers, with what kind of answer it is in headers ({@code idempotent-replayed} when {@code replayed}).
     */
    Uni<Void> send(String client, byte[] recordKey, String key, String correlationId, RecordedResponse response,
                           boolean replayed) {
        Headers headers = new RecordHeaders();
        headers.add(STATUS, utf8(Integer.toString(response.status())));
        headers.add(CONTENT_TYPE, utf8(response.contentType()));
        if (key != null) {
            headers.add(CommandHeaders.KEY, utf8(key));
        }
        if (correlationId != null) {
            headers.add(KafkaCommands.CORRELATION, utf8(correlationId));
        }
        if (replayed) {
            headers.add(REPLAYED, utf8("true"));
        }
        return outcomes.sendMessage(Message.of(response.body(), Metadata.of(OutgoingKafkaRecordMetadata.<byte[]>builder()
                .withTopic(KafkaTopics.outcomesOf(client)).withKey(recordKey).withHeaders(headers).build())));
    }

    /** The record as it arrived (key, value, headers) with the reason and its client, to the dead-letter topic. */
    Uni<Void> deadLetter(byte[] recordKey, byte[] value, Headers original, String problemSlug, String client) {
        Headers headers = new RecordHeaders();
        for (Header header : original) {
            headers.add(header);
        }
        headers.add(PROBLEM, utf8(problemSlug));
        headers.add(CLIENT, utf8(client));
        return outcomes.sendMessage(Message.of(value == null ? new byte[0] : value, Metadata.of(OutgoingKafkaRecordMetadata.<byte[]>builder()
                .withTopic(KafkaTopics.DEAD_LETTERS)
                .withKey(recordKey)
                .withHeaders(headers).build())));
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
