package dev.ledger.commands;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentExecutor;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.OutcomeMetrics;
import dev.ledger.idempotency.ResponseRecorder;
import dev.ledger.input.JsonBody;
import dev.ledger.input.JsonMediaType;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import dev.ledger.security.ApiKeys;
import dev.ledger.tracing.CommandSpans;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The brokers' one door to the engine: the life of a command, whatever broker it came from. Each broker's
 * adapter hands it {@link Delivery deliveries}; the door reads the command ({@link CommandEnvelope}, its kind's
 * body through {@link CommandKinds}), runs it through the same {@link IdempotentExecutor} as the HTTP POST it
 * stands for, and settles it by one table ({@link Settlement}): its outcome published then the message
 * acknowledged; tried again after a back-off; or dead-lettered with its reason. Metrics, the command's
 * {@code process} span and its own Vert.x context are the door's too, so a broker is only what it must be:
 * receive, publish, acknowledge or not, dead-letter, pause (docs/design.md, "How a command flows").
 */
@ApplicationScoped
public class CommandDoor {
    private static final Logger LOG = Logger.getLogger(CommandDoor.class);

    /**
     * What happens to a command, for each way its run through the engine ends: the door's one table.
     * <table>
     *   <tr><th>the engine's answer</th><th>the command</th></tr>
     *   <tr><td>recorded (applied, refused, replayed), or the key reused</td><td>{@link #PUBLISH}: its outcome
     *       published, then acknowledged (not confirmed: {@link #RETRY})</td></tr>
     *   <tr><td>unavailable (the store failing closed, Postgres), or the original still in flight after
     *       {@code ledger.idempotency.max-wait}</td><td>{@link #RETRY} after a back-off: never dead-lettered
     *       for it</td></tr>
     *   <tr><td>a failure of another kind (a bug)</td><td>{@link #RETRY}, and at its
     *       {@code ledger.messaging.max-deliveries}th attempt {@link #DEAD_LETTER} {@code internal-error}</td></tr>
     * </table>
     * A command that cannot be read never reaches the engine: its 400 goes to its sender when it is a known client,
     * and it is dead-lettered with the problem's slug.
     */
    public enum Settlement {
        PUBLISH, RETRY, DEAD_LETTER;

        /** The settlement of attempt {@code attempt} (from 1), which ended with {@code outcome} or {@code failure}. */
        public static Settlement of(Outcome outcome, Throwable failure, int attempt, int maxDeliveries) {
            if (failure != null) {
                return attempt >= maxDeliveries ? DEAD_LETTER : RETRY;
            }
            return outcome instanceof Outcome.Unavailable || outcome instanceof Outcome.InFlight ? RETRY : PUBLISH;
        }
    }

    private final IdempotentExecutor executor;
    private final CommandKinds kinds;
    private final ResponseRecorder recorder;
    private final CommandMetrics metrics;
    private final OutcomeMetrics outcomes;
    private final ApiKeys keys;
    private final LedgerConfig config;
    private final Vertx vertx;
    private final Tracer tracer;
    /** Each broker's engine meters, by transport. */
    private final Map<String, OutcomeMetrics.Door> engines = new ConcurrentHashMap<>();

    public CommandDoor(IdempotentExecutor executor, CommandKinds kinds, ResponseRecorder recorder, CommandMetrics metrics,
                       OutcomeMetrics outcomes, ApiKeys keys, LedgerConfig config, Vertx vertx, Tracer tracer) {
        this.executor = executor;
        this.kinds = kinds;
        this.recorder = recorder;
        this.metrics = metrics;
        this.outcomes = outcomes;
        this.keys = keys;
        this.config = config;
        this.vertx = vertx;
        this.tracer = tracer;
    }

    /**
     * Handles the delivery on a Vert.x context of its own (the current event loop's, or one of Vert.x' loops),
     * under its {@code process} span; completes when it is settled, or given up until the broker delivers it again.
     */
    public CompletionStage<Void> run(Delivery delivery) {
        Context current = Vertx.currentContext();
        return run(delivery, current != null && current.isEventLoopContext() ? current : vertx.getOrCreateContext());
    }

    /** {@link #run(Delivery)} on {@code loop}'s event loop, for a consumer whose deliveries arrive on a thread of its client's. */
    public CompletionStage<Void> run(Delivery delivery, Context loop) {
        CompletableFuture<Void> settled = new CompletableFuture<>();
        VertxContext.createNewDuplicatedContext(loop).runOnContext(ignored -> {
            Span span = CommandSpans.startProcess(tracer, delivery.received(), delivery.transport(), delivery.destination());
            handle(delivery).onTermination().invoke(() -> CommandSpans.end(span)).subscribe().with(
                    done -> settled.complete(null),
                    failure -> {
                        LOG.errorf(failure, "A %s command could not be settled; the broker delivers it again", delivery.transport());
                        settled.complete(null);
                    });
        });
        return settled;
    }

    Uni<Void> handle(Delivery delivery) {
        Command command;
        try {
            command = read(delivery.envelope());
            delivery.check(command);
        } catch (CommandRefused refused) {
            return refuse(delivery, refused);
        }
        return attempt(delivery, command, delivery.firstAttempt());
    }

    /** The command in the envelope, as the HTTP door would read its request; throws {@link CommandRefused}. */
    Command read(CommandEnvelope envelope) {
        String sender = envelope.sender();
        String correlation = envelope.correlationId() != null ? envelope.correlationId() : envelope.key();
        boolean authenticated = config.auth().enabled();
        if (authenticated && (sender == null || !keys.knowsClient(sender))) {
            throw new CommandRefused(new ProblemException(ProblemType.UNAUTHORIZED, sender == null
                    ? "A command needs the client id of its sender" : "The sender names no client this service knows"),
                    false, envelope.key(), correlation);
        }
        String client = clientOf(sender);
        try {
            if (envelope.unreadable() != null) {
                throw envelope.unreadable();
            }
            IdempotencyKey key = IdempotencyKey.parseBare(envelope.key(), envelope.keyName());
            if (envelope.contentType() != null && !JsonMediaType.isJson(envelope.contentType())) {
                throw new ProblemException(ProblemType.INVALID_REQUEST,
                        "A command's content type must be application/json, not " + envelope.contentType());
            }
            CommandKinds.Kind kind = kinds.named(envelope.kind()).orElseThrow(() -> new ProblemException(
                    ProblemType.INVALID_REQUEST, "No command is named '" + envelope.kind() + "'"));
            CommandKinds.Body body = kind.reader().read(
                    JsonBody.parse(envelope.body(), config.request().maxBodyBytes(), kind.members()), client, key);
            return new Command(envelope.kind() == null ? CommandKinds.DEFAULT : envelope.kind(), sender, client, key,
                    correlation != null ? correlation : key.value(), body.request(), body.step(), body.partitionKey());
        } catch (ProblemException invalid) {
            throw new CommandRefused(invalid, true, envelope.key(), correlation);
        }
    }

    /** The client a command of {@code sender} runs for: the sender, or with authentication off the one client {@code default}. */
    public String clientOf(String sender) {
        return config.auth().enabled() ? sender : ApiKeys.DEFAULT_CLIENT;
    }

    /** One run of the engine, settled by the table. */
    private Uni<Void> attempt(Delivery delivery, Command command, int attempt) {
        long start = System.nanoTime();
        OutcomeMetrics.Door engine = engines.computeIfAbsent(delivery.transport(), outcomes::door);
        return executor.execute(command.request(), command.step(), config.idempotency().maxWait())
                .onItemOrFailure().transformToUni((outcome, failure) -> {
                    if (failure != null) {
                        engine.failed(start);
                    } else {
                        engine.record(outcome, start);
                        if (outcome instanceof Outcome.Unavailable unavailable) {
                            if (!unavailable.clientMoving()) { // a client's move is its pause, not its shard's outage
                                delivery.unavailable(command.client());
                            }
                        } else {
                            delivery.available(command.client());
                        }
                    }
                    int limit = config.messaging().maxDeliveries();
                    return switch (Settlement.of(outcome, failure, attempt, limit)) {
                        case PUBLISH -> publish(delivery, command, outcome, attempt);
                        case RETRY -> {
                            if (failure != null) {
                                LOG.errorf(failure, "A %s command failed at its attempt %d of %d; tried again",
                                        delivery.transport(), attempt, limit);
                            }
                            yield retry(delivery, command, attempt);
                        }
                        case DEAD_LETTER -> {
                            LOG.errorf(failure, "A %s command failed at its attempt %d of %d; dead-lettered as internal-error",
                                    delivery.transport(), attempt, limit);
                            yield deadLetter(delivery, "internal-error");
                        }
                    };
                });
    }

    /** The outcome, confirmed, then the acknowledgement; not confirmed: tried again (its redelivery replays). */
    private Uni<Void> publish(Delivery delivery, Command command, Outcome outcome, int attempt) {
        return confirmed(delivery.publish(command, outcome))
                .chain(delivery::acknowledge)
                .invoke(() -> metrics.settled(delivery.transport(), outcome))
                .onFailure().recoverWithUni(notConfirmed -> {
                    LOG.warnf("The outcome of %s command %s was not confirmed by the broker (%s); tried again",
                            delivery.transport(), command.request().logLabel(), notConfirmed.toString());
                    return retry(delivery, command, attempt);
                });
    }

    private Uni<Void> retry(Delivery delivery, Command command, int attempt) {
        metrics.redelivered(delivery.transport());
        return delivery.retry(attempt).chain(again -> again ? attempt(delivery, command, attempt + 1) : Uni.createFrom().voidItem());
    }

    /** A command that cannot be read: its 400 to a known sender, then the dead letter with its reason. */
    private Uni<Void> refuse(Delivery delivery, CommandRefused refused) {
        Uni<Void> answer = refused.answerable()
                ? confirmed(delivery.refuse(refused, recorder.problem(refused.problem().problem())))
                : Uni.createFrom().voidItem();
        return answer.chain(() -> deadLetter(delivery, refused.slug()))
                .onFailure().recoverWithUni(notConfirmed -> {
                    LOG.warnf("The refusal of a %s command was not confirmed by the broker (%s); tried again",
                            delivery.transport(), notConfirmed.toString());
                    return delivery.retry(1).chain(again -> again ? refuse(delivery, refused) : Uni.createFrom().voidItem());
                });
    }

    /** The dead letter, confirmed, then the acknowledgement; not confirmed: tried again. */
    private Uni<Void> deadLetter(Delivery delivery, String slug) {
        return confirmed(delivery.deadLetter(slug))
                .chain(delivery::acknowledge)
                .invoke(() -> metrics.deadLettered(delivery.transport(), slug))
                .onFailure().recoverWithUni(notConfirmed -> {
                    LOG.warnf("A %s dead letter was not confirmed by the broker (%s); tried again", delivery.transport(),
                            notConfirmed.toString());
                    metrics.redelivered(delivery.transport());
                    return delivery.retry(1).chain(again -> again ? deadLetter(delivery, slug) : Uni.createFrom().voidItem());
                });
    }

    /**
     * A publish the broker confirmed within {@code ledger.messaging.confirm-timeout}, or a failure: a publisher that
     * lost its connection may never answer, and a broker short of memory or disk blocks every publisher.
     */
    private Uni<Void> confirmed(Uni<Void> publish) {
        return publish.ifNoItem().after(config.messaging().confirmTimeout()).fail();
    }
}
