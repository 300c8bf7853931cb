package dev.ledger.http;

import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemMapper;
import dev.ledger.problem.ProblemType;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import java.util.Map;
import java.util.Optional;

/**
 * A POST body must be declared {@code application/json}, in UTF-8 when a charset is named.
 * JAX-RS matching lets a request with no {@code Content-Type} through; the contract answers 415.
 */
public class ContentTypeFilter {

    @ServerRequestFilter
    public Optional<Response> requireJson(ContainerRequestContext request) {
        if (!"POST".equals(request.getMethod())) {
            return Optional.empty();
        }
        MediaType type = request.getMediaType();
        String charset = type == null ? null : type.getParameters().get(MediaType.CHARSET_PARAMETER);
        if (type != null && type.isCompatible(MediaType.APPLICATION_JSON_TYPE) && !type.isWildcardType()
                && !type.isWildcardSubtype() && (charset == null || charset.equalsIgnoreCase("utf-8"))) {
            return Optional.empty();
        }
        return Optional.of(ProblemMapper.respond(new Problem(ProblemType.UNSUPPORTED_MEDIA_TYPE,
                "Request bodies must be application/json (UTF-8)"), Map.of()));
    }
}
