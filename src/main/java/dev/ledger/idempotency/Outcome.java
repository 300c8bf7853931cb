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
     * {@code insufficient-funds}), fresh or {@code replayed}. {@code waited}: how long the request was
     * allowed to wait for an in-flight original before it got this answer; null when it did not wait.
     */
    record Recorded(RecordedResponse response, boolean replayed, Duration waited) implements Outcome {
    }

    /** Another request with the key is in flight (still, if this one waited). Nothing recorded. */
    record InFlight(RecordedResponse response, long retryAfterSeconds) implements Outcome {
    }

    /** The key was used by the client for another request. Nothing recorded. */
    record KeyReused(RecordedResponse response) implements Outcome {
    }

    /**
     * Redis (failing closed) or Postgres could not answer. The key was given back; whether a
     * statement that timed out committed is unknown, and a retry finds out (it applies at most once).
     */
    record Unavailable(RecordedResponse response, long retryAfterSeconds) implements Outcome {
    }
}
