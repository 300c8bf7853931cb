package dev.ledger.commands.kafka;

import dev.ledger.commands.CommandMetrics;
import dev.ledger.tracing.CommandSpans;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.IdempotentExecutor;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.OutcomeMetrics;
import dev.ledger.idempotency.ResponseRecorder;
import dev.ledger.security.ApiKeys;
import dev.ledger.transaction.TransactionService;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.KafkaRecord;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Kafka's door to the engine: payment commands from the topics {@code ledger.commands.<client-id>}, each
 * run through the same {@link IdempotentExecutor} as {@code POST /accounts/{id}/transactions}, and its
 * {@link Outcome} translated into Kafka's terms (API.md "Payment commands over Kafka"):
 * <ul>
 *   <li>recorded (applied, refused, replayed) or key reused: the outcome is produced and acknowledged
 *       by the broker, then the record is acknowledged, and its offset committed within
 *       {@code auto.commit.interval.ms}; a crash before the commit redelivers it, and the durable record
 *       turns the redelivery into a replay;</li>
 *   <li>unavailable (Redis failing closed, Postgres), or an original still in flight after
 *       {@code ledger.idempotency.max-wait}: retried in place, backing off from
 *       {@code ledger.messaging.retry-delay} to {@code ledger.messaging.kafka.max-retry-delay}; never
 *       skipped, committed past or dead-lettered for that reason;</li>
 *   <li>unreadable: a 400 to the client's outcome topic and a copy of the record to
 *       {@code ledger.dead.commands} with its reason; from a client that is not configured: only the copy,
 *       {@code unauthorized}; then the offset moves on;</li>
 *   <li>a failure of another kind (a bug): retried, and dead-lettered as {@code internal-error} at its
 *       {@code ledger.messaging.max-deliveries}th attempt.</li>
 * </ul>
 * Ordering and concurrency are {@link CommandLanes}': one account's commands of a partition one at a
 * time, in offset order; the rest at once, at most {@code ledger.messaging.prefetch} in flight, past which
 * the connector stops fetching.
 */
@ApplicationScoped
public class KafkaCommands {
    private static final Logger LOG = Logger.getLogger(KafkaCommands.class);
    static final String CHANNEL = "kafka-commands";

    private final IdempotentExecutor executor;
    private final TransactionService transactions;
    private final KafkaOutcomes outcomes;
    private final ResponseRecorder recorder;
    private final CommandMetrics metrics;
    private final OutcomeMetrics.Door engine;
    private final ApiKeys keys;
    private final LedgerConfig config;
    private final Vertx vertx;
    private final CommandLanes lanes;

    private final Tracer tracer;

    public KafkaCommands(IdempotentExecutor executor, TransactionService transactions, KafkaOutcomes outcomes,
                         ResponseRecorder recorder, CommandMetrics metrics, OutcomeMetrics engine, ApiKeys keys,
                         LedgerConfig config, Vertx vertx, @Identifier(CommandLanes.NAME) CommandLanes lanes, Tracer tracer) {
        this.tracer = tracer;
        this.executor = executor;
        this.transactions = transactions;
        this.outcomes = outcomes;
        this.recorder = recorder;
        this.metrics = metrics;
        this.engine = engine.door(CommandMetrics.KAFKA);
        this.keys = keys;
        this.config = config;
        this.vertx = vertx;
        this.lanes = lanes;
    }

    /** Takes the record into its lane; the connector delivers the next one when there is room. */
    @Incoming(CHANNEL)
    public CompletionStage<Void> consume(KafkaRecord<byte[], byte[]> record) {
        return lanes.admit(record, this::run);
    }

    /** A record's whole handling, on a Vert.x context of its own; completes when it is settled (or given up). */
    private CompletionStage<Void> run(CommandLanes.Job job) {
        CompletableFuture<Void> settled = new CompletableFuture<>();
        Context own = VertxContext.createNewDuplicatedContext(vertx.getOrCreateContext());
        own.runOnContext(ignored -> {
            Span span = CommandSpans.startProcess(tracer, job.record(), "kafka", job.record().getTopic());
            handle(job).onTermination().invoke(() -> CommandSpans.end(span)).subscribe().with(
                    done -> settled.complete(null),
                    failure -> {
                        LOG.errorf(failure, "A Kafka command could not be settled; it is delivered again after a restart or rebalance");
                        settled.complete(null);
                    });
        });
        return settled;
    }

    Uni<Void> handle(CommandLanes.Job job) {
        KafkaRecord<byte[], byte[]> record = job.record();
        Optional<String> topicClient = KafkaTopics.clientOf(record.getTopic());
        if (topicClient.isEmpty() || (config.auth().enabled() && !keys.knowsClient(topicClient.get()))) {
            return deadLetter(job, "unauthorized", topicClient.orElse(""));
        }
        KafkaCommand command;
        try {
            String client = config.auth().enabled() ? topicClient.get() : ApiKeys.DEFAULT_CLIENT;
            command = KafkaCommand.read(topicClient.get(), client, record.getKey(), record.getPayload(), record.getHeaders(),
                    config.request().maxBodyBytes());
        } catch (KafkaCommand.Refused refused) {
            return confirmed(outcomes.refusal(refused.answerTo, record.getKey(), refused.key, refused.correlationId,
                            recorder.problem(refused.problem.problem())))
                    .chain(() -> deadLetter(job, refused.slug(), topicClient.get()));
        }
        return attempt(job, command, 1);
    }

    /** One run of the engine; a settled outcome is published then acknowledged, anything else tried again in place. */
    private Uni<Void> attempt(CommandLanes.Job job, KafkaCommand command, int attempt) {
        long start = System.nanoTime();
        return executor.execute(command.request(), record -> transactions.post(record, command.payment()),
                        config.idempotency().maxWait())
                .onItemOrFailure().transformToUni((outcome, failure) -> {
                    if (failure != null) {
                        engine.failed(start);
                        return failed(job, command, attempt, failure);
                    }
                    engine.record(outcome, start);
                    if (outcome instanceof Outcome.Unavailable || outcome instanceof Outcome.InFlight) {
                        return again(job, command, attempt);
                    }
                    return confirmed(outcomes.publish(command, outcome))
                            .chain(() -> acknowledge(job))
                            .invoke(() -> metrics.settled(CommandMetrics.KAFKA, outcome))
                            .onFailure().recoverWithUni(notConfirmed -> {
                                LOG.warnf("The outcome of Kafka command %s was not acknowledged by the broker (%s); tried again",
                                        command.request().logLabel(), notConfirmed.toString());
                                return again(job, command, attempt);
                            });
                });
    }

    private Uni<Void> failed(CommandLanes.Job job, KafkaCommand command, int attempt, Throwable failure) {
        int limit = config.messaging().maxDeliveries();
        if (attempt >= limit) {
            LOG.errorf(failure, "Kafka command failed at its attempt %d of %d; dead-lettered as internal-error", attempt, limit);
            return deadLetter(job, "internal-error", command.topicClient());
        }
        LOG.errorf(failure, "Kafka command failed at its attempt %d of %d; tried again", attempt, limit);
        return again(job, command, attempt);
    }

    /** The same command again, in place, after a back-off that doubles; not when its partition went to another consumer. */
    private Uni<Void> again(CommandLanes.Job job, KafkaCommand command, int attempt) {
        if (job.revoked()) {
            return Uni.createFrom().voidItem();
        }
        metrics.redelivered(CommandMetrics.KAFKA);
        Duration first = config.messaging().retryDelay();
        Duration max = config.messaging().kafka().maxRetryDelay();
        Duration delay = first.multipliedBy(1L << Math.min(attempt - 1, 20));
        return Uni.createFrom().voidItem().onItem().delayIt().by(delay.compareTo(max) > 0 ? max : delay)
                .chain(() -> job.revoked() ? Uni.createFrom().voidItem() : attempt(job, command, attempt + 1));
    }

    /** The record to the dead-letter topic with its reason, acknowledged by the broker; then the record is acknowledged. */
    private Uni<Void> deadLetter(CommandLanes.Job job, String slug, String client) {
        KafkaRecord<byte[], byte[]> record = job.record();
        return confirmed(outcomes.deadLetter(record.getKey(), record.getPayload(), record.getHeaders(), slug, client))
                .chain(() -> acknowledge(job))
                .invoke(() -> metrics.deadLettered(CommandMetrics.KAFKA, slug))
                .onFailure().recoverWithUni(notConfirmed -> {
                    LOG.warnf("A dead letter was not acknowledged by the broker (%s); tried again", notConfirmed.toString());
                    return job.revoked() ? Uni.createFrom().voidItem()
                            : Uni.createFrom().voidItem().onItem().delayIt().by(config.messaging().retryDelay())
                                    .chain(() -> deadLetter(job, slug, client));
                });
    }

    /** A produce the broker acknowledged within {@code ledger.messaging.confirm-timeout}, or a failure. */
    private Uni<Void> confirmed(Uni<Void> produce) {
        return produce.ifNoItem().after(config.messaging().confirmTimeout()).fail();
    }

    /** The record processed: its offset may be committed. */
    private static Uni<Void> acknowledge(CommandLanes.Job job) {
        return Uni.createFrom().completionStage(job.record()::ack).replaceWithVoid();
    }
}
