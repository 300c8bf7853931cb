package dev.ledger.idempotency;

import java.time.OffsetDateTime;

/** The idempotency record a POST's Postgres transaction inserts first: its scope, fingerprint and expiry. */
public record DurableRecord(String client, byte[] keyHash, byte[] fingerprint, OffsetDateTime expiresAt) {
}
