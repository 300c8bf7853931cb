package dev.ledger.http;

import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemMapper;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

import java.util.Map;

/**
 * Answers a problem decided from the request line and headers alone, before the body is read
 * ({@link RequestLimits}, {@link AcceptableResponses}, {@link DeclaredBodyLimit}).
 *
 * <p>The body stays unread: once the answer is sent, Quarkus resumes the request it paused
 * ({@code ResumingRequestWrapper}, as {@code quarkus.http.limits.max-body-size} is set) and Vert.x drops
 * what arrives, so a client that writes its whole body before reading still gets the answer and the
 * connection stays usable (closing on unread data would make the kernel reset the connection, which
 * can destroy the answer in flight). A declared body over {@link #SWALLOW_BYTES} is not worth reading:
 * {@code Connection: close}, as with Tomcat's {@code maxSwallowSize}.
 */
final class EarlyRefusal {
    /** The largest refused body still read to its end (Tomcat's default {@code maxSwallowSize}). */
    static final long SWALLOW_BYTES = 2L << 20;

    private EarlyRefusal() {
    }

    static void send(RoutingContext context, Problem problem, Map<String, String> headers) {
        String length = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
        if (length != null && declaredLength(length) > SWALLOW_BYTES) {
            // as Quarkus' own check does: the request never ends, so Vert.x would keep the connection
            HttpConnection connection = context.request().connection();
            context.response().putHeader(HttpHeaders.CONNECTION, "close").endHandler(sent -> connection.close());
        }
        ProblemMapper.send(context.response(), problem, headers);
    }

    /**
     * A Content-Length value: -1 for one that is not a number (left to the HTTP codec), and
     * {@link Long#MAX_VALUE} for one past a long.
     */
    static long declaredLength(String header) {
        if (header.isEmpty()) {
            return -1;
        }
        for (int i = 0; i < header.length(); i++) {
            char c = header.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(header);
        } catch (NumberFormatException tooManyDigits) {
            return Long.MAX_VALUE;
        }
    }
}
