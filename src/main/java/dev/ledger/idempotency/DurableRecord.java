package dev.ledger.idempotency;

import java.time.OffsetDateTime;

/**
 * The idempotency record a POST's Postgres transaction inserts first: its scope, fingerprint, expiry and the
 * request's path (what the key's lookup shows). Every statement that writes one takes all of it.
 */
public record DurableRecord(String client, byte[] keyHash, byte[] fingerprint, OffsetDateTime expiresAt, String path) {

    /** The record of {@code request}, kept until {@code expiresAt}. */
    public static DurableRecord of(IdempotentRequest request, OffsetDateTime expiresAt) {
        return new DurableRecord(request.client(), request.keyHash(), request.fingerprint().bytes(), expiresAt, request.path());
    }
}
