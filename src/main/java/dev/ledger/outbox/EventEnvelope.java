package dev.ledger.outbox;

import io.quarkus.runtime.annotations.RegisterForReflection;

import java.time.Instant;
import java.util.UUID;

/**
 * The body of every event: {@code data} is the transaction or the account exactly as the API shows
 * it (the same view, rendered by the same mapper, as the 201 that applied it).
 */
@RegisterForReflection
public record EventEnvelope(UUID eventId, String type, Instant occurredAt, String client, UUID accountId, Object data) {
    public static final String TRANSACTION_APPLIED = "transaction.applied";
    public static final String ACCOUNT_OPENED = "account.opened";
}
