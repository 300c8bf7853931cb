package dev.ledger.idempotency;

import java.util.function.Supplier;

/**
 * What the Postgres transaction of a POST ended with: a fresh answer ({@code replayed} false), or
 * the answer already recorded for the key ({@code replayed} true, the case where Redis forgot).
 * {@code fingerprint} is the one stored with the key; the answer is rendered only when it
 * matches this request's, since a record written by another endpoint cannot be rendered here.
 */
public record DurableOutcome(boolean replayed, RequestFingerprint fingerprint, Supplier<RecordedResponse> answer) {
}
