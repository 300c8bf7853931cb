package dev.ledger.idempotency;

import io.smallrye.mutiny.Uni;

/**
 * The fast path of idempotency, as the engine ({@link IdempotentExecutor}) sees it: reserve a key for
 * an owner, complete it with the recorded answer (and until when the key keeps it), or release it, each one
 * atomic call, and look whether a key is still in flight. A store may forget anything at any time; Postgres decides. Every
 * write is fenced by the owner token: it changes a key only while that owner holds it (or the key is
 * free), never over another owner's state.
 *
 * <p>A call the store refused without sending anything (its breaker open) fails with a failure that
 * {@link dev.ledger.dependency.Breakers#refused} recognises: the request then holds nothing in the store.
 */
public interface IdempotencyStore {

    /** The store as logs name it: {@code Redis}, {@code DynamoDB}. */
    String name();

    /** Reserves the request's key for {@code owner}, or says what the key holds. */
    Uni<Reservation> reserve(IdempotentRequest request, String owner);

    /**
     * Records the committed answer if {@code owner} still holds the key or the key is free; answers
     * whether it was written. Sent even while the store's breaker is open, as is {@link #release}: nothing
     * else frees a key before its lease ends.
     */
    Uni<Boolean> complete(IdempotentRequest request, String owner, RecordedResponse response);

    /** Frees the key if {@code owner} still holds it, so that a retry executes afresh. */
    Uni<Boolean> release(IdempotentRequest request, String owner);

    /**
     * The key ({@link IdempotentRequest#keyId}) while an in-flight request holds it; null when it is completed or free.
     * A reservation keeps the request's path and time for this (one more field or two in the call that makes it).
     */
    Uni<InFlightKey> inFlight(String keyId);
}
