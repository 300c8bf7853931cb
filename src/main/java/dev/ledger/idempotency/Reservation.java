package dev.ledger.idempotency;

/** What the store found for a key when a request tried to reserve it. */
public sealed interface Reservation {

    /**
     * The caller may execute: it owns the key for the lease and {@code owner} fences its later
     * writes; or, with {@code owner} null, the store was not reached and holds nothing of this request.
     * {@code storeBypassed}: the store could not answer, and the request goes on through Postgres alone.
     */
    record Acquired(String owner, boolean storeBypassed) implements Reservation {
        public Acquired(String owner) {
            this(owner, false);
        }
    }

    /** The key completed with this answer (for the same request). */
    record Completed(RecordedResponse response) implements Reservation {
    }

    /** Another request holds the key for {@code remainingMillis} more. */
    record InProgress(long remainingMillis) implements Reservation {
        /** For {@code Retry-After}: the remaining lease in whole seconds, at least 1. */
        public long retryAfterSeconds() {
            return Math.max(1, (remainingMillis + 999) / 1000);
        }
    }

    /** The key was used for a different request. */
    record Mismatch() implements Reservation {
    }
}
