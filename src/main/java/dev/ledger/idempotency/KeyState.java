package dev.ledger.idempotency;

import java.time.Instant;

/**
 * What became of a client's key ({@link KeyLookup}): {@code completed} with its recorded answer's {@code status} and
 * {@code location} (null when it had none), or in flight (both null). {@code path} is the request's (null when the
 * record predates paths); {@code createdAt} when the key was first used; {@code expiresAt} when it stops being
 * remembered: the record's expiry once completed, the lease's end while in flight.
 */
public record KeyState(boolean completed, String path, Integer status, String location, Instant createdAt,
                       Instant expiresAt) {
}
