package dev.ledger.idempotency;

import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

/**
 * The answer recorded for an idempotency key, as the HTTP API renders it: exactly the status,
 * {@code Content-Type}, {@code Location} and body bytes the first request got, so that a replay is
 * byte-identical, whichever door it goes out of; and {@code expiresAt}, when the key stops being
 * remembered (the durable record's {@code expires_at}), which the first answer and every replay say
 * alike. {@code expiresAt} is null for an answer nothing was recorded for (a key in flight or reused,
 * a dependency unavailable), and for one a store kept without it.
 */
public record RecordedResponse(int status, String contentType, String location, byte[] body, Instant expiresAt) {

    /** An answer not (yet) tied to a record's expiry. */
    public RecordedResponse(int status, String contentType, String location, byte[] body) {
        this(status, contentType, location, body, null);
    }

    /** The same answer, remembered until {@code expiresAt}. */
    public RecordedResponse keptUntil(Instant expiresAt) {
        return new RecordedResponse(status, contentType, location, body, expiresAt);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RecordedResponse r && status == r.status && contentType.equals(r.contentType)
                && Objects.equals(location, r.location) && Arrays.equals(body, r.body) && Objects.equals(expiresAt, r.expiresAt);
    }

    @Override
    public int hashCode() {
        return 31 * status + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "RecordedResponse[" + status + ", " + body.length + " bytes" + (expiresAt == null ? "" : ", until " + expiresAt) + "]";
    }
}
