package dev.ledger.idempotency;

import java.util.Arrays;

/**
 * The answer recorded for an idempotency key, as the HTTP API renders it: exactly the status,
 * {@code Content-Type}, {@code Location} and body bytes the first request got, so that a replay is
 * byte-identical, whichever door it goes out of.
 */
public record RecordedResponse(int status, String contentType, String location, byte[] body) {

    @Override
    public boolean equals(Object o) {
        return o instanceof RecordedResponse r && status == r.status && contentType.equals(r.contentType)
                && java.util.Objects.equals(location, r.location) && Arrays.equals(body, r.body);
    }

    @Override
    public int hashCode() {
        return 31 * status + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return "RecordedResponse[" + status + ", " + body.length + " bytes]";
    }
}
