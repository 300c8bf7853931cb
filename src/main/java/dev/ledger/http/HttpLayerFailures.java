package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemMapper;
import dev.ledger.problem.ProblemType;
import io.quarkus.security.AuthenticationException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.util.Map;

/**
 * Failures the HTTP layer reports after a request was routed, answered as problems instead of Quarkus'
 * bare status or error page ({@code QuarkusErrorHandler}, the router's last failure handler):
 * <ul>
 *   <li>the body handler's status-only failures: 413 for a body sent without a length (chunked) past
 *       {@code quarkus.http.limits.max-body-size}, 400 for a body it cannot decode, 417 for an
 *       {@code Expect} other than {@code 100-continue};</li>
 *   <li>a body the HTTP codec cannot decode (a malformed chunk): Vert.x fails the connection, tells its
 *       exception handler and closes it; that handler, set here for each request, answers 400 and
 *       closes it first ({@link #unreadable});</li>
 *   <li>any other failure of a route, as {@link ProblemMapper#failure} has it (500 with an incident id).</li>
 * </ul>
 * Security failures stay with Quarkus, which answers them with the API key mechanism's challenge.
 */
@ApplicationScoped
public class HttpLayerFailures {
    private static final Logger LOG = Logger.getLogger(HttpLayerFailures.class);

    private final int maxBodyBytes;

    public HttpLayerFailures(LedgerConfig config) {
        this.maxBodyBytes = config.request().maxBodyBytes();
    }

    /** Watches the request's connection for a body the HTTP codec cannot decode ({@link HttpChecks} runs this first). */
    static void watch(RoutingContext context) {
        HttpConnection connection = context.request().connection();
        if (context.request().version() != HttpVersion.HTTP_2 && connection != null) {
            HttpServerResponse response = context.response();
            connection.exceptionHandler(failure -> unreadable(connection, response, failure));
        }
    }

    /**
     * Vert.x closes the connection right after telling this handler, and a close from there drops what
     * was written but not yet flushed (an answer sent while the same read is decoded, for example a 401).
     * Closing it here flushes first, so that answer, or this 400, reaches the client.
     */
    private static void unreadable(HttpConnection connection, HttpServerResponse response, Throwable failure) {
        if (failure instanceof IOException || response.headWritten() || response.closed()) {
            LOG.tracef("Connection failure: %s", failure);
        } else {
            LOG.debugf("Unreadable request body: %s", failure);
            ProblemMapper.send(response, new Problem(ProblemType.INVALID_REQUEST,
                    "The request body is not well-formed HTTP/1.1 (for example a malformed chunk)"), Map.of("Connection", "close"));
        }
        connection.close();
    }

    /** A failure no route answered ({@link HttpChecks} registers this just before Quarkus' own error handler). */
    void failed(RoutingContext context) {
        Throwable failure = context.failure();
        if (OperatingSurface.contains(context) || failure instanceof AuthenticationException
                || failure instanceof UnauthorizedException || failure instanceof ForbiddenException) {
            context.next();
            return;
        }
        HttpServerResponse response = context.response();
        if (response.ended() || response.closed()) {
            // the connection failed after the answer (its exception handler above answered) or the client left
            LOG.debugf("Failure after the answer was sent: %s", failure);
            return;
        }
        Problem problem = switch (context.statusCode()) {
            case 400 -> new Problem(ProblemType.INVALID_REQUEST, context.request().version() == HttpVersion.HTTP_1_1
                    && context.request().authority() == null
                    ? "An HTTP/1.1 request must carry a Host header (RFC 9112, 3.2)"
                    : "The request could not be read");
            case 413 -> new Problem(ProblemType.PAYLOAD_TOO_LARGE, "The request body is larger than the "
                    + maxBodyBytes + " bytes accepted");
            case 417 -> new Problem(ProblemType.EXPECTATION_FAILED, "The only expectation this API meets is Expect: 100-continue");
            default -> null;
        };
        if (problem != null) {
            ProblemMapper.send(response, problem, Map.of());
        } else if (failure != null) {
            ProblemMapper.send(response, ProblemMapper.failure(failure));
        } else {
            context.next();
        }
    }
}
