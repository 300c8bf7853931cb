package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.problem.DependencyFailures;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;

/**
 * The idempotency state machine every POST runs through, in one place:
 * <ol>
 *   <li><b>reserve</b> the key in Redis: a completed key replays, an in-flight one answers 409
 *       {@code request-in-progress}, one used for another request 422 {@code idempotency-key-reused};
 *       when Redis cannot answer, go on without it (Postgres still decides), or answer 503 when
 *       {@code ledger.redis.fail-closed} is set;</li>
 *   <li><b>execute</b> the business step in one Postgres transaction that inserts the durable record
 *       first, so a duplicate Redis forgot gets the recorded answer instead of a second effect;</li>
 *   <li><b>complete</b> the key in Redis with the answer (owner-checked), or on failure before the
 *       answer is known <b>release</b> it (owner-checked) and answer 503, so a retry executes afresh.</li>
 * </ol>
 */
@ApplicationScoped
public class IdempotentExecutor {
    private static final Logger LOG = Logger.getLogger(IdempotentExecutor.class);

    private final IdempotencyStore store;
    private final LedgerConfig config;

    public IdempotentExecutor(IdempotencyStore store, LedgerConfig config) {
        this.store = store;
        this.config = config;
    }

    /** The answer to send: fresh, or replayed (from Redis, or from Postgres when Redis forgot the key). */
    public record Answer(RecordedResponse response, boolean replayed) {
    }

    public Uni<Answer> execute(IdempotentRequest request, DurableOperation operation) {
        // The token exists before the call, so that a reservation which lands after its call timed
        // out is still ours: fenced out by complete/release, never left blocking the key.
        String owner = store.newOwner();
        return store.reserve(request, owner)
                .onFailure().recoverWithUni(failure -> redisUnavailable(request, owner, failure))
                .chain(reservation -> {
                    if (reservation instanceof Reservation.Acquired acquired) {
                        return executeDurably(request, acquired.owner(), operation);
                    }
                    if (reservation instanceof Reservation.Completed completed) {
                        return Uni.createFrom().item(new Answer(completed.response(), true));
                    }
                    if (reservation instanceof Reservation.InProgress inProgress) {
                        return Uni.createFrom().failure(inProgress(inProgress));
                    }
                    return Uni.createFrom().failure(keyReused());
                });
    }

    /**
     * Degrade to Postgres alone (the default), or fail closed with 503 when so configured. A reserve
     * that was sent may still land after its failure, so the request keeps its owner token and fences
     * it later; one the open breaker refused was never sent, so the request holds nothing in Redis
     * and makes no further Redis call (the breaker logs the outage once, see RedisScripts).
     */
    private Uni<Reservation> redisUnavailable(IdempotentRequest request, String owner, Throwable failure) {
        boolean sent = !(failure instanceof CallNotPermittedException);
        String fenced = sent ? owner : null;
        if (sent) {
            LOG.warnf("Redis unavailable at reserve (%s); key %s goes to %s",
                    failure.getClass().getSimpleName(), request.logLabel(),
                    config.redis().failClosed() ? "a 503 (fail-closed)" : "Postgres directly");
        } else {
            LOG.debugf("Redis breaker open; key %s goes to %s", request.logLabel(),
                    config.redis().failClosed() ? "a 503 (fail-closed)" : "Postgres directly");
        }
        if (config.redis().failClosed()) {
            return release(request, fenced).replaceWith(Uni.createFrom().failure(unavailable("The idempotency store is unavailable; nothing was applied. Retry with the same Idempotency-Key")));
        }
        return Uni.createFrom().item(new Reservation.Acquired(fenced));
    }

    private Uni<Answer> executeDurably(IdempotentRequest request, String owner, DurableOperation operation) {
        OffsetDateTime expiresAt = OffsetDateTime.now(ZoneOffset.UTC).plus(config.idempotency().retention());
        DurableRecord record = new DurableRecord(request.client(), request.keyHash(),
                request.fingerprint().bytes(), expiresAt);
        return Uni.createFrom().deferred(() -> operation.execute(record))
                // Nothing known to be committed: free the key so that a retry executes afresh.
                // (If the commit did land, the retry finds the durable record and replays it.)
                .onFailure().call(failure -> release(request, owner))
                .onFailure(DependencyFailures::isUnavailable).transform(failure -> {
                    LOG.warnf("Postgres unavailable for key %s: %s", request.logLabel(), failure.toString());
                    // A statement that timed out may still commit: say so, never "nothing was applied".
                    return unavailable("The ledger database did not confirm this request in time; it may or may not "
                            + "have been applied. Retry with the same Idempotency-Key: it is applied at most once, and "
                            + "the retry answers with its outcome");
                })
                .chain(outcome -> {
                    if (!outcome.fingerprint().equals(request.fingerprint())) {
                        // Redis had forgotten a key that Postgres holds for another request.
                        return release(request, owner).replaceWith(Uni.createFrom().failure(keyReused()));
                    }
                    RecordedResponse answer = outcome.answer().get();
                    return complete(request, owner, answer).replaceWith(new Answer(answer, outcome.replayed()));
                });
    }

    private Uni<Void> complete(IdempotentRequest request, String owner, RecordedResponse answer) {
        if (owner == null) {
            return Uni.createFrom().voidItem();
        }
        return store.complete(request, owner, request.fingerprint(), answer)
                .onFailure().recoverWithItem(failure -> {
                    // The answer is committed in Postgres; a retry replays it from there.
                    LOG.warnf("Could not record key %s in Redis (%s)", request.logLabel(), failure.getClass().getSimpleName());
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
                    // The lease expires by itself; until then a retry gets 409 request-in-progress.
                    LOG.warnf("Could not release key %s in Redis (%s)", request.logLabel(), failure.getClass().getSimpleName());
                    return false;
                })
                .replaceWithVoid();
    }

    private static ProblemException inProgress(Reservation.InProgress inProgress) {
        return new ProblemException(
                new Problem(ProblemType.REQUEST_IN_PROGRESS,
                        "A request with this Idempotency-Key is still being processed; retry after it completes"),
                Map.of("Retry-After", Long.toString(inProgress.retryAfterSeconds())));
    }

    private static ProblemException keyReused() {
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_REUSED,
                "This Idempotency-Key was already used for a different request (method, path or body)");
    }

    private static ProblemException unavailable(String detail) {
        return new ProblemException(new Problem(ProblemType.SERVICE_UNAVAILABLE, detail), Map.of("Retry-After", "1"));
    }
}
