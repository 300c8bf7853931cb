package dev.ledger.idempotency;

import io.vertx.mutiny.sqlclient.Row;

import java.time.OffsetDateTime;
import java.util.function.Function;

/**
 * What the Postgres transaction of a request ended with, as its statement decided: the request
 * {@link Kind#EXECUTED executed} now, or the key already held an answer for the
 * {@link Kind#REPLAYED same request} (Redis had forgotten it), or for
 * {@link Kind#OTHER_REQUEST another request} (the key was reused; nothing is answered from it).
 * {@code response} is the recorded answer, null for another request.
 */
public record DurableOutcome(Kind kind, RecordedResponse response) {
    public enum Kind { EXECUTED, REPLAYED, OTHER_REQUEST }

    /** The request's own answer: executed now, or {@code replayed} from the record (the same request). */
    public static DurableOutcome answered(boolean replayed, RecordedResponse response) {
        return new DurableOutcome(replayed ? Kind.REPLAYED : Kind.EXECUTED, response);
    }

    /** The key holds another request's answer: nothing of it is rendered or sent. */
    public static DurableOutcome otherRequest() {
        return new DurableOutcome(Kind.OTHER_REQUEST, null);
    }

    /**
     * The outcome of the row a POST's statement returned. Every such statement (the {@code _checked}
     * functions) returns {@code replayed}, {@code same_request} and {@code expires_at} (the record's: the one
     * it inserted, or the one it replays) beside its own columns, which {@code render} turns into the answer.
     */
    public static DurableOutcome of(Row row, Function<Row, RecordedResponse> render) {
        if (!row.getBoolean("same_request")) {
            return otherRequest();
        }
        OffsetDateTime expiresAt = row.getOffsetDateTime("expires_at");
        RecordedResponse response = render.apply(row);
        return answered(row.getBoolean("replayed"), expiresAt == null ? response : response.keptUntil(expiresAt.toInstant()));
    }
}
