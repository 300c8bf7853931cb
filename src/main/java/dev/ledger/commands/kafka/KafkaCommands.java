package dev.ledger.commands.kafka;

import dev.ledger.commands.Command;
import dev.ledger.commands.CommandDoor;
import dev.ledger.commands.CommandEnvelope;
import dev.ledger.commands.CommandHeaders;
import dev.ledger.commands.CommandMetrics;
import dev.ledger.commands.CommandRefused;
import dev.ledger.commands.Delivery;
import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.input.Uuids;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.TracingMetadata;
import io.smallrye.reactive.messaging.kafka.KafkaRecord;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * Kafka's adapter to the {@link CommandDoor} (API.md "Payment commands over Kafka"): records from the topics
 * {@code ledger.commands.<client-id>}, the client from the topic ({@link KafkaTopics}), the key, correlation,
 * content type and command from headers (UTF-8, each at most once); the record key must name the account the
 * command keeps its order with. Outcomes go to {@code ledger.outcomes.<client-id>} keyed as the record was, and
 * unreadable records to {@code ledger.dead.commands} ({@link KafkaOutcomes}); acknowledging a record lets its
 * offset be committed. A command tried again is retried in place (its lane waits), backing off from
 * {@code ledger.messaging.retry-delay} doubling to {@code ledger.messaging.kafka.max-retry-delay}, and never once
 * its partition went to another consumer. Ordering and concurrency are {@link KafkaLanes}': one account's records
 * of a partition one at a time, in offset order; the rest at once, at most {@code ledger.messaging.kafka.max-held} of each
 * PostgreSQL shard's, past which the partitions of that shard's clients are paused (and only those).
 */
@ApplicationScoped
public class KafkaCommands {
    static final String CHANNEL = "kafka-commands";
    static final String CORRELATION = "correlation-id";
    /** The command a record carries ({@code transactions.post} when absent). */
    static final String COMMAND = "ledger-command";

    private final CommandDoor door;
    private final KafkaOutcomes outcomes;
    private final KafkaLanes lanes;
    private final Duration firstDelay;
    private final Duration maxDelay;

    public KafkaCommands(CommandDoor door, KafkaOutcomes outcomes, @Identifier(KafkaLanes.NAME) KafkaLanes lanes,
                         LedgerConfig config) {
        this.door = door;
        this.outcomes = outcomes;
        this.lanes = lanes;
        this.firstDelay = config.messaging().retryDelay();
        this.maxDelay = config.messaging().kafka().maxRetryDelay();
    }

    /** Takes the record into its lane; the connector delivers the next one at once. */
    @Incoming(CHANNEL)
    public CompletionStage<Void> consume(KafkaRecord<byte[], byte[]> record) {
        return lanes.admit(record, job -> door.run(new KafkaDelivery(job)));
    }

    private final class KafkaDelivery implements Delivery {
        private final KafkaLanes.Job job;
        private final KafkaRecord<byte[], byte[]> record;
        /** The client the topic names: where outcomes go, whoever the engine runs the command for. */
        private final String topicClient;

        KafkaDelivery(KafkaLanes.Job job) {
            this.job = job;
            this.record = job.record();
            this.topicClient = KafkaTopics.clientOf(record.getTopic()).orElse(null);
        }

        @Override
        public String transport() {
            return CommandMetrics.KAFKA;
        }

        @Override
        public String destination() {
            return record.getTopic();
        }

        @Override
        public io.opentelemetry.context.Context received() {
            return TracingMetadata.fromMessage(record).map(TracingMetadata::getCurrentContext).orElse(null);
        }

        /** The headers, the correlation first: a refusal for anything else wrong with the record still names it. */
        @Override
        public CommandEnvelope envelope() {
            Headers headers = record.getHeaders();
            ProblemException unreadable = null;
            String correlation = null;
            String key = null;
            String contentType = null;
            String kind = null;
            try {
                correlation = single(headers, CORRELATION);
                key = single(headers, CommandHeaders.KEY);
                contentType = single(headers, KafkaOutcomes.CONTENT_TYPE);
                kind = single(headers, COMMAND);
            } catch (ProblemException invalid) {
                unreadable = invalid;
            }
            return new CommandEnvelope(topicClient, kind, CommandHeaders.KEY, key, correlation, contentType,
                    record.getPayload(), unreadable);
        }

        /** The record key names the account the command stays in order with (when its kind names one). */
        @Override
        public void check(Command command) {
            if (command.partitionKey() == null) {
                return;
            }
            byte[] recordKey = record.getKey();
            UUID named = recordKey == null ? null : Uuids.parse(new String(recordKey, StandardCharsets.UTF_8)).orElse(null);
            if (!command.partitionKey().equals(named)) {
                throw new CommandRefused(new ProblemException(ProblemType.INVALID_REQUEST,
                        "The record key must be the command's account, " + command.partitionKey()), true,
                        command.key().value(), command.correlationId());
            }
        }

        @Override
        public int firstAttempt() {
            return 1;
        }

        @Override
        public Uni<Void> publish(Command command, Outcome outcome) {
            boolean replayed = outcome instanceof Outcome.Recorded recorded && recorded.replayed();
            return outcomes.send(topicClient, record.getKey(), command.key().value(), command.correlationId(),
                    outcome.response(), replayed);
        }

        @Override
        public Uni<Void> refuse(CommandRefused refused, RecordedResponse problem) {
            return outcomes.send(topicClient, record.getKey(), refused.key(), refused.correlationId(), problem, false);
        }

        @Override
        public Uni<Void> deadLetter(String slug) {
            return outcomes.deadLetter(record.getKey(), record.getPayload(), record.getHeaders(), slug,
                    topicClient == null ? "" : topicClient);
        }

        @Override
        public Uni<Void> acknowledge() {
            return Uni.createFrom().completionStage(record::ack).replaceWithVoid();
        }

        /** In place, after a back-off that doubles; not when its partition went to another consumer. */
        @Override
        public Uni<Boolean> retry(int attempt) {
            if (job.revoked()) {
                return Uni.createFrom().item(false);
            }
            Duration delay = firstDelay.multipliedBy(1L << Math.min(Math.max(attempt, 1) - 1, 20));
            return Uni.createFrom().voidItem().onItem().delayIt().by(delay.compareTo(maxDelay) > 0 ? maxDelay : delay)
                    .map(ignored -> !job.revoked());
        }
    }

    /** A header's value, or null when absent; a header given twice, or not UTF-8, is refused, as over HTTP. */
    private static String single(Headers headers, String name) {
        Iterator<Header> values = headers.headers(name).iterator();
        if (!values.hasNext()) {
            return null;
        }
        byte[] value = values.next().value();
        boolean key = name.equals(CommandHeaders.KEY);
        if (values.hasNext()) {
            throw key ? new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID, "The header '" + name + "' must be given once")
                    : invalid("The header '" + name + "' must be given at most once");
        }
        if (value == null) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(value)).toString();
        } catch (CharacterCodingException e) {
            throw key ? new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID, "The header '" + name + "' is not visible ASCII")
                    : invalid("The header '" + name + "' is not valid UTF-8");
        }
    }

    private static ProblemException invalid(String detail) {
        return new ProblemException(ProblemType.INVALID_REQUEST, detail);
    }
}
