package dev.ledger.idempotency;

import jakarta.ws.rs.core.Response;

import java.util.Arrays;

/**
 * The answer recorded for an idempotency key: exactly the status, {@code Content-Type},
 * {@code Location} and body bytes the first request got, so that a replay is byte-identical.
 */
public record RecordedResponse(int status, String contentType, String location, byte[] body) {
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    public Response toResponse(boolean replayed) {
        Response.ResponseBuilder builder = Response.status(status)
                .header("Content-Type", contentType)
                .entity(body);
        if (location != null && !location.isEmpty()) {
            builder.header("Location", location);
        }
        if (replayed) {
            builder.header(REPLAYED_HEADER, "true");
        }
        return builder.build();
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
