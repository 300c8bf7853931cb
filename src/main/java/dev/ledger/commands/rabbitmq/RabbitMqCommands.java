package dev.ledger.commands.rabbitmq;

import dev.ledger.commands.CommandFlow;
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
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMessage;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The broker's door to the engine: payment commands from {@code ledger.commands}, each run through
 * the same {@link IdempotentExecutor} as {@code POST /accounts/{id}/transactions}, and its
 * {@link Outcome} translated into the broker's terms (API.md "Payment commands over RabbitMQ"):
 * <ul>
 *   <li>recorded (applied, refused, replayed) or key reused: the outcome message is published and
 *       confirmed, then the command is acknowledged; a crash before the ack redelivers it, and the
 *       durable record turns the redelivery into a replay;</li>
 *   <li>in flight: the command waits for the original ({@code ledger.idempotency.max-wait}), so it is
 *       acknowledged with the original's outcome as a replay; if the original is still running, it is
 *       requeued after a back-off, never in a tight loop;</li>
 *   <li>unavailable (Redis failing closed, Postgres): requeued after {@code ledger.messaging.retry-delay},
 *       never dead-lettered; {@link CommandFlow} pauses consumption while failures keep coming;</li>
 *   <li>unreadable or from an unknown sender: dead-lettered with its reason ({@code x-ledger-problem}),
 *       never retried; a readable {@code reply_to} gets the 400;</li>
 *   <li>a failure of another kind (a bug): requeued, and dead-lettered as {@code internal-error} at
 *       its {@code ledger.messaging.max-deliveries}th delivery.</li>
 * </ul>
 * The method hands each command to its own Vert.x context and returns at once: how many run at a
 * time is bounded by the broker's prefetch ({@code ledger.messaging.prefetch}), since every one holds
 * an unacknowledged delivery until it is settled.
 */
@ApplicationScoped
public class RabbitMqCommands {
    private static final Logger LOG = Logger.getLogger(RabbitMqCommands.class);
    /** Quorum queues count a command's earlier deliveries here (absent on the first). */
    static final String DELIVERY_COUNT = "x-delivery-count";

    private final IdempotentExecutor executor;
    private final TransactionService transactions;
    private final OutcomePublisher publisher;
    private final ResponseRecorder recorder;
    private final CommandFlow flow;
    private final CommandMetrics metrics;
    private final OutcomeMetrics.Door outcomes;
    private final ApiKeys keys;
    private final LedgerConfig config;
    private final Vertx vertx;

    /** The queue commands are consumed from (mp.messaging.incoming.commands.queue.name), as traces name it. */
    private static final String QUEUE = "ledger.commands";
    private final Tracer tracer;

    public RabbitMqCommands(IdempotentExecutor executor, TransactionService transactions, OutcomePublisher publisher,
                           ResponseRecorder recorder, CommandFlow flow, CommandMetrics metrics, OutcomeMetrics outcomes,
                           ApiKeys keys, LedgerConfig config, Vertx vertx, Tracer tracer) {
        this.tracer = tracer;
        this.executor = executor;
        this.transactions = transactions;
        this.publisher = publisher;
        this.recorder = recorder;
        this.flow = flow;
        this.metrics = metrics;
        this.outcomes = outcomes.door(CommandMetrics.RABBITMQ);
        this.keys = keys;
        this.config = config;
        this.vertx = vertx;
    }

    @Incoming("commands")
    public CompletionStage<Void> consume(Message<byte[]> message) {
        Context current = Vertx.currentContext();
        Context loop = current != null && current.isEventLoopContext() ? current : vertx.getOrCreateContext();
        Context own = VertxContext.createNewDuplicatedContext(loop);
        own.runOnContext(ignored -> {
            Span span = CommandSpans.startProcess(tracer, message, "rabbitmq", QUEUE);
            handle(message).onTermination().invoke(() -> CommandSpans.end(span)).subscribe().with(
                    settled -> {
                    },
                    failure -> LOG.errorf(failure, "A command could not be settled; the broker redelivers it"));
        });
        return CompletableFuture.completedFuture(null);
    }

    Uni<Void> handle(Message<byte[]> message) {
        IncomingRabbitMQMetadata delivery = message.getMetadata(IncomingRabbitMQMetadata.class).orElseThrow();
        RabbitMqCommand command;
        try {
            command = RabbitMqCommand.read(delivery, message.getPayload(), keys, config);
        } catch (RabbitMqCommand.Refused refused) {
            return refuse(message, delivery, refused);
        }
        long start = System.nanoTime();
        return executor.execute(command.request(), record -> transactions.post(record, command.payment()),
                        config.idempotency().maxWait())
                // only the engine's failure is the command's: one of settling is not retried by requeueing
                .onItemOrFailure().transformToUni((outcome, failure) -> {
                    if (failure != null) {
                        outcomes.failed(start);
                        return failed(message, delivery, failure);
                    }
                    outcomes.record(outcome, start);
                    return settle(message, command, outcome);
                });
    }

    private Uni<Void> settle(Message<byte[]> message, RabbitMqCommand command, Outcome outcome) {
        if (outcome instanceof Outcome.Unavailable) {
            flow.unavailable();
            metrics.redelivered(CommandMetrics.RABBITMQ);
            return later(requeue(message));
        }
        flow.available();
        if (outcome instanceof Outcome.InFlight) {
            // it waited max-wait for the original, which still runs: neither applied nor dropped
            metrics.redelivered(CommandMetrics.RABBITMQ);
            return later(requeue(message));
        }
        return confirmed(publisher.publish(command.key().value(), command.correlationId(), command.replyTo(), outcome),
                        command.request().logLabel())
                .chain(published -> published
                        ? acknowledge(message).invoke(() -> metrics.settled(CommandMetrics.RABBITMQ, outcome))
                        : later(requeue(message)));
    }

    /**
     * Whether the broker confirmed what was published within {@code ledger.messaging.confirm-timeout}.
     * Not confirmed (the broker away, a channel closed, or no answer at all: a sender still
     * reconnecting after an outage may leave its publish unanswered): the command is requeued rather
     * than acknowledged; if the publish did land, the redelivery publishes the recorded outcome again,
     * as a replay.
     */
    private Uni<Boolean> confirmed(Uni<Void> publish, String label) {
        return publish.ifNoItem().after(config.messaging().confirmTimeout()).fail().replaceWith(true)
                .onFailure().recoverWithItem(notConfirmed -> {
                    LOG.warnf("A message for command %s was not confirmed by the broker (%s); the command is redelivered",
                            label, notConfirmed.toString());
                    metrics.redelivered(CommandMetrics.RABBITMQ);
                    return false;
                });
    }

    /**
     * The acknowledgement, the last step of a settled command: nothing after it may requeue the
     * same delivery (a second settlement of one delivery closes the broker channel). If the ack is
     * lost, the broker redelivers, and the redelivery replays.
     */
    private static Uni<Void> acknowledge(Message<byte[]> message) {
        return Uni.createFrom().completionStage(message::ack).onFailure().recoverWithItem(lost -> {
            LOG.warnf("A command's acknowledgement was lost (%s); the broker redelivers it and it replays", lost.toString());
            return null;
        });
    }

    private Uni<Void> refuse(Message<byte[]> message, IncomingRabbitMQMetadata delivery, RabbitMqCommand.Refused refused) {
        Uni<Void> answer = refused.answerable
                ? publisher.reply(delivery.getMessageId().orElse(null),
                        delivery.getCorrelationId().or(delivery::getMessageId).orElse(null),
                        delivery.getReplyTo().filter(queue -> !queue.isEmpty()), recorder.problem(refused.problem.problem()))
                : Uni.createFrom().voidItem();
        return answer.chain(() -> deadLetter(message, delivery, refused.slug()));
    }

    private Uni<Void> failed(Message<byte[]> message, IncomingRabbitMQMetadata delivery, Throwable failure) {
        long delivered = delivery.getHeader(DELIVERY_COUNT, Number.class).map(Number::longValue).orElse(0L) + 1;
        if (delivered >= config.messaging().maxDeliveries()) {
            LOG.errorf(failure, "Command failed at its delivery %d of %d; dead-lettered as internal-error", delivered,
                    config.messaging().maxDeliveries());
            return deadLetter(message, delivery, "internal-error");
        }
        LOG.errorf(failure, "Command failed at its delivery %d of %d; requeued", delivered, config.messaging().maxDeliveries());
        metrics.redelivered(CommandMetrics.RABBITMQ);
        return later(requeue(message));
    }

    /** Published to the dead-letter exchange with its reason and confirmed, then acknowledged. */
    private Uni<Void> deadLetter(Message<byte[]> message, IncomingRabbitMQMetadata delivery, String slug) {
        return confirmed(publisher.deadLetter(delivery, message.getPayload(), slug), delivery.getMessageId().orElse("?"))
                .chain(published -> published
                        ? acknowledge(message).invoke(() -> metrics.deadLettered(CommandMetrics.RABBITMQ, slug))
                        : later(requeue(message)));
    }

    /**
     * Gives the delivery back to the broker for redelivery. The connector's own nack would do the
     * same but log a warning for every command it requeues (its failure handlers treat a nack as a
     * failure to report); a requeue here is an expected step, counted in the metrics instead.
     */
    private static Uni<Void> requeue(Message<byte[]> message) {
        if (message instanceof IncomingRabbitMQMessage<?> delivery) {
            return Uni.createFrom().item(() -> {
                delivery.rejectMessage(REQUEUED, true);
                return null;
            });
        }
        return Uni.createFrom().completionStage(() -> message.nack(REQUEUED, Metadata.of(new RabbitMQRejectMetadata(true))));
    }

    /** After the back-off: the delivery stays unacknowledged (and counted in the prefetch) meanwhile. */
    private Uni<Void> later(Uni<Void> action) {
        Duration delay = config.messaging().retryDelay();
        return Uni.createFrom().voidItem().onItem().delayIt().by(delay).chain(() -> action);
    }

    /** Why a command was given back to the broker; not an error. */
    private static final RuntimeException REQUEUED = new RuntimeException("requeued", null, false, false) {
    };
}
