package dev.ledger.idempotency;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;

import java.util.Arrays;

/**
 * The answer recorded for an idempotency key: exactly the status, {@code Content-Type},
 * {@code Location} and body bytes the first request got, so that a replay is byte-identical.
 */
public record RecordedResponse(int status, String contentType, String location, byte[] body) {
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    /** Sends this answer on the HTTP response, marked {@code Idempotent-Replayed: true} when {@code replayed}. */
    public void send(HttpServerResponse response, boolean replayed) {
        response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, contentType);
        if (location != null && !location.isEmpty()) {
            response.putHeader(HttpHeaders.LOCATION, location);
        }
        if (replayed) {
            response.putHeader(REPLAYED_HEADER, "true");
        }
        response.end(Buffer.buffer(body));
    }

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
