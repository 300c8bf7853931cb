package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemType;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;

/**
 * Refuses a request whose declared {@code Content-Length} exceeds {@code ledger.request.max-body-bytes}
 * before its body reaches the application: 413 {@code payload-too-large} as a problem body
 * ({@link EarlyRefusal} says what becomes of the unread body). It runs ahead of Quarkus' own check of
 * {@code quarkus.http.limits.max-body-size} (a route of order -2), which would answer a body over that
 * limit with an empty 413, against the contract's "every error body is a problem". A body sent without
 * a length (chunked) is counted as it is read: the resource answers the same problem up to the HTTP
 * limit (1 MiB), and {@link HttpLayerFailures} past it.
 */
@ApplicationScoped
public class DeclaredBodyLimit {
    private final long maxBytes;

    public DeclaredBodyLimit(LedgerConfig config) {
        this.maxBytes = config.request().maxBodyBytes();
    }

    /** Whether the declared body is over the limit, and the request was answered so ({@link HttpChecks} runs this). */
    boolean refused(RoutingContext context) {
        String header = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
        long declared = header == null ? -1 : EarlyRefusal.declaredLength(header);
        if (declared <= maxBytes) {
            return false;
        }
        EarlyRefusal.send(context, new Problem(ProblemType.PAYLOAD_TOO_LARGE,
                "The request body is " + header + " bytes; at most " + maxBytes + " are accepted"), Map.of());
        return true;
    }
}
