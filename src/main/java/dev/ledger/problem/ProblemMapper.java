package dev.ledger.problem;

import dev.ledger.dependency.DependencyFailures;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.Json;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.util.Map;
import java.util.UUID;

/**
 * The one place where an exception becomes an HTTP answer, always RFC 9457 problem+json.
 * Nothing of an exception's class, message or stack reaches a client except a
 * {@link ProblemException}'s own detail.
 */
public class ProblemMapper {
    private static final Logger LOG = Logger.getLogger(ProblemMapper.class);

    @ServerExceptionMapper
    public Response problem(ProblemException e) {
        return respond(e.problem(), e.headers());
    }

    @ServerExceptionMapper
    public Response webApplication(WebApplicationException e) {
        int status = e.getResponse() == null ? 500 : e.getResponse().getStatus();
        Problem problem;
        if (e instanceof NotFoundException) {
            problem = new Problem(ProblemType.NOT_FOUND, "No resource at this path");
        } else if (e instanceof NotAllowedException) {
            // not reached on the API's paths: dev.ledger.http.AllowedMethods answers first, with Allow
            problem = methodNotAllowed();
        } else if (e instanceof NotSupportedException || status == 415) {
            problem = unsupportedMediaType();
        } else if (e instanceof NotAcceptableException) {
            // not reached outside /q/: dev.ledger.http.AcceptableResponses answers first, with the same problem
            problem = notAcceptable();
        } else if (status == 413) {
            problem = new Problem(ProblemType.PAYLOAD_TOO_LARGE, "Request body too large");
        } else if (status >= 400 && status < 500) {
            problem = new Problem(ProblemType.INVALID_REQUEST, "The request could not be read");
        } else {
            return unexpected(e);
        }
        return respond(problem, Map.of());
    }

    /** 405: the same answer from the HTTP layer ({@code AllowedMethods}) and from Quarkus REST. */
    public static Problem methodNotAllowed() {
        return new Problem(ProblemType.METHOD_NOT_ALLOWED, "This method is not allowed on this path");
    }

    /** 406: the same answer from the HTTP layer ({@code AcceptableResponses}) and from Quarkus REST. */
    public static Problem notAcceptable() {
        return new Problem(ProblemType.NOT_ACCEPTABLE,
                "This API answers in application/json (errors in application/problem+json), which the Accept header does not admit");
    }

    /** 415: the same answer from the POST routes ({@code IdempotentPosts}) and from Quarkus REST. */
    public static Problem unsupportedMediaType() {
        return new Problem(ProblemType.UNSUPPORTED_MEDIA_TYPE, "Request bodies must be application/json (UTF-8)");
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e) {
        ProblemException problem = failure(e);
        return respond(problem.problem(), problem.headers());
    }

    /**
     * Any failure as the problem it answers: a {@link ProblemException} as it is, an unavailable
     * dependency as 503 {@code service-unavailable}, anything else (a bug) as 500
     * {@code internal-error}, logged with an incident id that the detail repeats.
     */
    public static ProblemException failure(Throwable e) {
        if (e instanceof ProblemException problem) {
            return problem;
        }
        if (DependencyFailures.isUnavailable(e)) {
            LOG.warnf("Dependency unavailable: %s", e.toString());
            return new ProblemException(new Problem(ProblemType.SERVICE_UNAVAILABLE,
                    "A dependency is unavailable or timed out; retry shortly"), Map.of("Retry-After", "1"));
        }
        String incident = UUID.randomUUID().toString();
        LOG.errorf(e, "Unexpected failure, incident %s", incident);
        return new ProblemException(ProblemType.INTERNAL_ERROR, "Unexpected failure; incident " + incident);
    }

    public static Response respond(Problem problem, Map<String, String> headers) {
        Response.ResponseBuilder builder = Response.status(problem.getStatus())
                .type(Problem.MEDIA_TYPE)
                .entity(problem);
        headers.forEach(builder::header);
        return builder.build();
    }

    /** {@link #send(HttpServerResponse, Problem, Map)} of a failure's problem and headers. */
    public static void send(HttpServerResponse response, ProblemException failure) {
        send(response, failure.problem(), failure.headers());
    }

    /**
     * Sends a problem straight on the HTTP response, with the same body and headers as
     * {@link #respond}: for answers given outside Quarkus REST (the POST routes, the 405 of
     * {@code dev.ledger.http.AllowedMethods}, the 401 of
     * {@code dev.ledger.security.ApiKeyAuthenticationMechanism}).
     */
    public static void send(HttpServerResponse response, Problem problem, Map<String, String> headers) {
        response.setStatusCode(problem.getStatus());
        headers.forEach(response::putHeader);
        response.putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE);
        response.end(Json.encodeToBuffer(problem));
    }
}
