package dev.ledger.idempotency;

import java.time.Duration;

/**
 * What the engine ({@link IdempotentExecutor}) answers a request, whichever door it came through.
 * It carries everything a door needs to translate it into its own terms (an HTTP answer; an
 * outcome message and an ack, a requeue or a dead-letter): the answer as the API renders it,
 * and what kind of answer that is.
 */
public sealed interface Outcome {
    /** The answer as the HTTP API sends it (status, content type, {@code Location}, body). */
    RecordedResponse response();

    /**
     * The key's recorded answer: the business outcome (applied, or a refusal such as
     * {@code insufficient-funds}), fresh or replayed, and from where ({@code source}). {@code waited}: how
     * long the request was allowed to wait for an in-flight original before it got this answer; null when
     * it did not wait. {@code storeBypassed}: the store could not answer, so Postgres alone decided.
     */
    record Recorded(RecordedResponse response, Source source, Duration waited, boolean storeBypassed) implements Outcome {
        /** Whether the answer was recorded by an earlier request. */
        public boolean replayed() {
            return source != Source.EXECUTED;
        }
    }

    /** Where a recorded answer came from. */
    enum Source {
        /** This request ran the business step. */
        EXECUTED,
        /** The fast path's store (Redis or DynamoDB) held the completed key. */
        STORE,
        /** The store did not know the key, and Postgres' durable record answered (the backstop). */
        POSTGRES
    }

    /** Another request with the key is in flight (still, if this one {@code waited}). Nothing recorded. */
    record InFlight(RecordedResponse response, long retryAfterSeconds, boolean waited) implements Outcome {
    }

    /** The key was used by the client for another request. Nothing recorded. */
    record KeyReused(RecordedResponse response) implements Outcome {
    }

    /**
     * The store (failing closed) or Postgres could not answer. The key was given back; whether a
     * statement that timed out committed is unknown, and a retry finds out (it applies at most once).
     * {@code released}: the business step was tried and failed (Postgres), rather than refused before
     * it ran (the store failing closed). {@code clientMoving}: the client is being moved to another shard, and its
     * old shard refused the statement (nothing applied); the client's pause, not a dependency's outage.
     */
    record Unavailable(RecordedResponse response, long retryAfterSeconds, boolean released, boolean clientMoving)
            implements Outcome {
        public Unavailable(RecordedResponse response, long retryAfterSeconds, boolean released) {
            this(response, retryAfterSeconds, released, false);
        }
    }
}
