package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Breakers;
import dev.ledger.dependency.DependencyFailures;
import dev.ledger.dependency.Postgres;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemType;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * The idempotency state machine, in one place, for every door (HTTP POSTs, broker commands): it
 * never asks where a request came from, and answers an {@link Outcome} each door translates.
 * <ol>
 *   <li><b>reserve</b> the key in the fast path's store ({@link IdempotencyStore}: Redis or DynamoDB): a
 *       completed key replays; one used for another request is
 *       {@code idempotency-key-reused}; an in-flight one is {@code request-in-progress}, or, when
 *       the request may <b>wait</b>, a wait for the original to settle ({@link KeyWaiters}) and a
 *       fresh reservation; when the store cannot answer, go on without it (Postgres still decides), or
 *       answer unavailable when {@code ledger.fast-path.fail-closed} is set;</li>
 *   <li><b>execute</b> the business step in one Postgres transaction that inserts the durable record
 *       first, so a duplicate the store forgot gets the recorded answer instead of a second effect;</li>
 *   <li><b>complete</b> the key in the store with the answer (owner-checked), or on failure before the
 *       answer is known <b>release</b> it (owner-checked) and answer unavailable, so a retry
 *       executes afresh.</li>
 * </ol>
 * A failure that is not a dependency's (a bug) fails the returned {@code Uni}.
 */
@ApplicationScoped
public class IdempotentExecutor {
    private static final Logger LOG = Logger.getLogger(IdempotentExecutor.class);
    /** The lease's end is a moment the original may have gone: look again just after it. */
    private static final long LEASE_GRACE_MILLIS = 50;

    private final IdempotencyStore store;
    private final KeyWaiters waiters;
    private final ResponseRecorder recorder;
    private final LedgerConfig config;
    private final OwnerTokens owners = new OwnerTokens();

    public IdempotentExecutor(IdempotencyStore store, KeyWaiters waiters, ResponseRecorder recorder, LedgerConfig config) {
        this.store = store;
        this.waiters = waiters;
        this.recorder = recorder;
        this.config = config;
    }

    /**
     * Runs the request; if its key is in flight, waits up to {@code wait} (capped by
     * {@code ledger.idempotency.max-wait}) for the original's recorded answer.
     */
    public Uni<Outcome> execute(IdempotentRequest request, DurableOperation operation, Duration wait) {
        // The token exists before the call, so that a reservation which lands after its call timed
        // out is still ours: fenced out by complete/release, never left blocking the key.
        String owner = owners.next();
        Duration bounded = wait.compareTo(config.idempotency().maxWait()) > 0 ? config.idempotency().maxWait() : wait;
        long deadline = bounded.isZero() || bounded.isNegative() ? 0 : System.nanoTime() + bounded.toNanos();
        return attempt(request, owner, operation, deadline, bounded, false)
                .onFailure(FailedClosed.class).recoverWithItem(failure -> storeFailedClosed())
                .invoke(OutcomeTrail::record);
    }

    /** {@code waited}: whether this attempt follows a wait, under the bound {@code wait}. */
    private Uni<Outcome> attempt(IdempotentRequest request, String owner, DurableOperation operation, long deadline,
                                 Duration wait, boolean waited) {
        Duration waitedFor = waited ? wait : null;
        return store.reserve(request, owner)
                .onFailure().recoverWithUni(failure -> storeUnavailable(request, owner, failure))
                .chain(reservation -> {
                    if (reservation instanceof Reservation.Acquired acquired) {
                        return executeDurably(request, acquired, operation, waitedFor);
                    }
                    if (reservation instanceof Reservation.Completed completed) {
                        return Uni.createFrom().item(new Outcome.Recorded(completed.response(), Outcome.Source.STORE,
                                waitedFor, false));
                    }
                    if (reservation instanceof Reservation.InProgress inProgress) {
                        long left = deadline - System.nanoTime();
                        if (deadline == 0 || left <= 0) {
                            return Uni.createFrom().item(inFlight(inProgress, waited));
                        }
                        Duration bound = Duration.ofNanos(Math.min(left,
                                Duration.ofMillis(inProgress.remainingMillis() + LEASE_GRACE_MILLIS).toNanos()));
                        return waiters.settled(request.keyId(), bound)
                                .chain(() -> attempt(request, owner, operation, deadline, wait, true));
                    }
                    return Uni.createFrom().item(keyReused());
                });
    }

    /**
     * Degrade to Postgres alone (the default), or fail closed when so configured. A reserve that
     * was sent may still land after its failure, so the request keeps its owner token and fences
     * it later, with a complete or release sent even through an open breaker
     * ({@link IdempotencyStore#complete}); one the open breaker refused was never sent, so the
     * request holds nothing in the store and makes no further call to it (the breaker logs the outage
     * once, {@link Breakers}).
     */
    private Uni<Reservation> storeUnavailable(IdempotentRequest request, String owner, Throwable failure) {
        boolean sent = !Breakers.refused(failure);
        String fenced = sent ? owner : null;
        String then = config.fastPath().failClosed() ? "a 503 (fail-closed)" : "Postgres directly";
        if (sent) {
            LOG.warnf("The idempotency store (%s) did not answer a reserve (%s); key %s goes to %s", store.name(),
                    failure.getClass().getSimpleName(), request.logLabel(), then);
        } else {
            LOG.debugf("The idempotency store's (%s) breaker is open; key %s goes to %s", store.name(), request.logLabel(), then);
        }
        if (config.fastPath().failClosed()) {
            return release(request, fenced).replaceWith(Uni.createFrom().failure(new FailedClosed()));
        }
        return Uni.createFrom().item(new Reservation.Acquired(fenced, true));
    }

    private Uni<Outcome> executeDurably(IdempotentRequest request, Reservation.Acquired reservation,
                                        DurableOperation operation, Duration waited) {
        String owner = reservation.owner();
        OffsetDateTime expiresAt = OffsetDateTime.now(ZoneOffset.UTC).plus(config.idempotency().retention());
        DurableRecord record = DurableRecord.of(request, expiresAt);
        return Uni.createFrom().deferred(() -> operation.execute(record))
                // Nothing known to be committed: free the key so that a retry executes afresh.
                // (If the commit did land, the retry finds the durable record and replays it.)
                .onFailure().call(failure -> release(request, owner))
                .<Outcome>chain(outcome -> switch (outcome.kind()) {
                    // The store had forgotten a key that Postgres holds for another request.
                    case OTHER_REQUEST -> release(request, owner).replaceWith(keyReused());
                    case EXECUTED, REPLAYED -> {
                        Outcome recorded = new Outcome.Recorded(outcome.response(), outcome.kind() == DurableOutcome.Kind.REPLAYED
                                ? Outcome.Source.POSTGRES : Outcome.Source.EXECUTED, waited, reservation.storeBypassed());
                        OutcomeTrail.record(recorded); // known now: the lines that complete logs carry it
                        yield complete(request, owner, outcome.response()).replaceWith(recorded);
                    }
                })
                .onFailure(Postgres::fenced).recoverWithItem(failure -> {
                    LOG.infof("Key %s met its client's fence: the client is moving to another shard", request.logLabel());
                    return clientMoving();
                })
                .onFailure(DependencyFailures::isUnavailable).recoverWithItem(failure -> {
                    LOG.warnf("Postgres unavailable for key %s: %s", request.logLabel(), failure.toString());
                    return databaseUnavailable();
                });
    }

    private Uni<Void> complete(IdempotentRequest request, String owner, RecordedResponse answer) {
        if (owner == null) {
            return Uni.createFrom().voidItem();
        }
        return store.complete(request, owner, answer)
                .onFailure().recoverWithItem(failure -> {
                    // The answer is committed in Postgres; a retry replays it from there.
                    LOG.warnf("Could not record key %s in the idempotency store (%s: %s)", request.logLabel(), store.name(),
                            failure.getClass().getSimpleName());
                    return false;
                })
                .replaceWithVoid();
    }

    private Uni<Void> release(IdempotentRequest request, String owner) {
        if (owner == null) {
            return Uni.createFrom().voidItem();
        }
        return store.release(request, owner)
                .onFailure().recoverWithItem(failure -> {
                    // The lease expires by itself; until then a retry gets request-in-progress.
                    LOG.warnf("Could not release key %s in the idempotency store (%s: %s)", request.logLabel(), store.name(),
                            failure.getClass().getSimpleName());
                    return false;
                })
                .replaceWithVoid();
    }

    private Outcome inFlight(Reservation.InProgress inProgress, boolean waited) {
        return new Outcome.InFlight(recorder.problem(new Problem(ProblemType.REQUEST_IN_PROGRESS,
                "A request with this Idempotency-Key is still being processed; retry after it completes")),
                inProgress.retryAfterSeconds(), waited);
    }

    private Outcome keyReused() {
        return new Outcome.KeyReused(recorder.problem(new Problem(ProblemType.IDEMPOTENCY_KEY_REUSED,
                "This Idempotency-Key was already used for a different request (method, path or body)")));
    }

    private Outcome storeFailedClosed() {
        return new Outcome.Unavailable(recorder.problem(new Problem(ProblemType.SERVICE_UNAVAILABLE,
                "The idempotency store is unavailable; nothing was applied. Retry with the same Idempotency-Key")), 1, false);
    }

    private Outcome databaseUnavailable() {
        // A statement that timed out may still commit: say so, never "nothing was applied".
        return new Outcome.Unavailable(recorder.problem(new Problem(ProblemType.SERVICE_UNAVAILABLE,
                "The ledger database did not confirm this request in time; it may or may not have been applied. "
                        + "Retry with the same Idempotency-Key: it is applied at most once, and the retry answers with "
                        + "its outcome")), 1, true);
    }

    private Outcome clientMoving() {
        return new Outcome.Unavailable(recorder.problem(new Problem(ProblemType.SERVICE_UNAVAILABLE,
                "This client's data are moving to another database; nothing was applied. Retry with the same "
                        + "Idempotency-Key in a moment")), 1, true, true);
    }

    /** The store could not answer and the service fails closed: nothing was sent to Postgres. */
    private static final class FailedClosed extends RuntimeException {
        FailedClosed() {
            super("Idempotency store unavailable, failing closed", null, false, false);
        }
    }
}
