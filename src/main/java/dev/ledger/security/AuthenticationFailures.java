package dev.ledger.security;

import dev.ledger.problem.ProblemMapper;
import io.quarkus.security.AuthenticationFailedException;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * A malformed or unknown API key, answered as every error is ({@link ProblemMapper}), with the challenge:
 * 401 {@code unauthorized} and {@code WWW-Authenticate}. Authentication is lazy, so Quarkus reports the
 * failure here, from the HTTP permission check that runs before any resource or filter (replacing its
 * own mapper, which answers with no body).
 */
public class AuthenticationFailures {
    @ServerExceptionMapper
    public Response unauthenticated(AuthenticationFailedException e, RoutingContext context) {
        return ProblemMapper.respond(ApiKeyAuthenticationMechanism.refusal(context), ApiKeyAuthenticationMechanism.CHALLENGE_HEADERS);
    }
}
