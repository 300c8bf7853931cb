package dev.ledger.idempotency;

import java.time.Instant;

/**
 * A key an in-flight request holds, as the store keeps it: the request's path and when it reserved the key
 * (each null when the store does not know it, as for a reservation the previous version made), and the lease's
 * end, after which the key is free again.
 */
public record InFlightKey(String path, Instant reservedAt, Instant leaseEnd) {
}
