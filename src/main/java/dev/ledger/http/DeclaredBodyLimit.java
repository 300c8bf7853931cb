package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemMapper;
import dev.ledger.problem.ProblemType;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.Map;

/**
 * Refuses a request whose declared {@code Content-Length} exceeds {@code ledger.request.max-body-bytes}
 * before its body reaches the application: 413 {@code payload-too-large} as a problem body. It runs
 * ahead of Quarkus' own check of {@code quarkus.http.limits.max-body-size} (a route of order -2),
 * which would answer a body over that limit with an empty 413, against the contract's "every error
 * body is a problem".
 *
 * <p>A body up to {@link #SWALLOW_BYTES} is read and dropped, so that a client which writes its
 * whole body before reading gets the answer (closing on unread data makes the kernel reset the
 * connection, which can destroy the answer in flight) and the connection stays usable; a larger
 * one gets {@code Connection: close}, as with Tomcat's {@code maxSwallowSize}. A body sent without
 * a length (chunked) is counted as it is read: the resource answers the same problem up to the HTTP
 * limit (1 MiB); past it, only the HTTP layer's empty 413 remains.
 */
@ApplicationScoped
public class DeclaredBodyLimit {
    /** Before {@code HttpServerCommonHandlers.enforceMaxBodySize} (order -2). */
    static final int ROUTE_ORDER = -3;
    /** The largest refused body still read to its end (Tomcat's default {@code maxSwallowSize}). */
    static final long SWALLOW_BYTES = 2L << 20;

    private final long maxBytes;

    public DeclaredBodyLimit(LedgerConfig config) {
        this.maxBytes = config.request().maxBodyBytes();
    }

    void register(@Observes Router router) {
        router.route().order(ROUTE_ORDER).handler(this::check);
    }

    private void check(RoutingContext context) {
        String header = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
        long declared = header == null ? -1 : declaredLength(header);
        if (declared <= maxBytes) {
            context.next();
            return;
        }
        HttpServerRequest request = context.request();
        if (declared > SWALLOW_BYTES) {
            // as Quarkus' own check does: the request never ends, so Vert.x would keep the connection
            context.response().putHeader(HttpHeaders.CONNECTION, "close")
                    .endHandler(sent -> request.connection().close());
        } else {
            request.handler(dropped -> {
            }).resume();
        }
        ProblemMapper.send(context.response(), new Problem(ProblemType.PAYLOAD_TOO_LARGE,
                "The request body is " + header + " bytes; at most " + maxBytes + " are accepted"), Map.of());
    }

    /**
     * A Content-Length value: -1 for one that is not a number (left to the HTTP codec), and
     * {@link Long#MAX_VALUE} for one past a long.
     */
    static long declaredLength(String header) {
        if (header.isEmpty() || !header.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        try {
            return Long.parseLong(header);
        } catch (NumberFormatException tooManyDigits) {
            return Long.MAX_VALUE;
        }
    }
}
