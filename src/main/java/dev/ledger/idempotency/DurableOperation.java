package dev.ledger.idempotency;

import io.smallrye.mutiny.Uni;

/**
 * The business step of a POST: one Postgres transaction that inserts {@code record} first
 * (unique on client and key) and, in the same commit, applies the change and its answer; or,
 * when the record exists already, returns the stored answer without applying anything.
 */
@FunctionalInterface
public interface DurableOperation {
    Uni<DurableOutcome> execute(DurableRecord record);
}
