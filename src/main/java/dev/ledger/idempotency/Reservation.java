package dev.ledger.idempotency;

import java.util.List;

/** What the reserve script found for a key; see {@code redis/reserve.lua}. */
public sealed interface Reservation {

    /**
     * The caller may execute: it owns the key for the lease and {@code owner} fences its later
     * writes; or, with {@code owner} null, Redis was not reached and holds nothing of this request.
     */
    record Acquired(String owner) implements Reservation {
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

    /** Decodes the script's reply (its elements as strings, nil as null). */
    static Reservation decode(List<String> reply, String owner) {
        if (reply.isEmpty()) {
            throw new IllegalArgumentException("Empty reply from the reserve script");
        }
        switch (reply.get(0)) {
            case "ACQUIRED":
                return new Acquired(owner);
            case "COMPLETED":
                if (reply.size() != 5) {
                    throw new IllegalArgumentException("COMPLETED needs 4 fields, got " + (reply.size() - 1));
                }
                String location = reply.get(3) == null || reply.get(3).isEmpty() ? null : reply.get(3);
                return new Completed(new RecordedResponse(Integer.parseInt(reply.get(1)), reply.get(2), location,
                        reply.get(4).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            case "IN_PROGRESS":
                // PTTL answers -1 for a key without expiry: never the case for a lease; treat as 0
                return new InProgress(Math.max(0, Long.parseLong(reply.get(1))));
            case "MISMATCH":
                return new Mismatch();
            default:
                throw new IllegalArgumentException("Unknown reply from the reserve script: " + reply.get(0));
        }
    }
}
