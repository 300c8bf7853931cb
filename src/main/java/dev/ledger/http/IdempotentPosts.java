package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.DurableOperation;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentExecutor;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.idempotency.Outcome;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemMapper;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.MediaType;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * What every POST does, in the order API.md implies (authentication, then {@code Accept}, are decided
 * before, by the HTTP layer): 415 unless the body is declared {@code application/json}, the
 * {@code Idempotency-Key} header, then the body (size, strict JSON and the endpoint's own rules) —
 * 400s and 413, nothing reserved — and then the idempotent execution of the
 * business step ({@link IdempotentExecutor}), whose answer is sent as it was recorded.
 *
 * <p>The POSTs are Vert.x routes ({@code @Route}), not JAX-RS resources: on a replay, the most
 * frequent retry, Quarkus REST's resource machinery cost about a quarter of the service's CPU
 * (docs/performance.md); and the answers are recorded bytes, which need no entity writer.
 */
@ApplicationScoped
public class IdempotentPosts {
    private final IdempotentExecutor executor;
    private final Caller caller;
    private static final String RETRY_AFTER = "Retry-After";
    private static final Pattern OWS_BEFORE_PARAMETER = Pattern.compile("[ \t]+;");

    private final int maxBodyBytes;
    private final Duration maxWait;

    public IdempotentPosts(IdempotentExecutor executor, Caller caller, LedgerConfig config) {
        this.executor = executor;
        this.caller = caller;
        this.maxBodyBytes = config.request().maxBodyBytes();
        this.maxWait = config.idempotency().maxWait();
    }

    /** A POST endpoint's body: its allowed members, and how to read the validated request (throws 400 problems). */
    public record Body<T>(List<String> members, Function<JsonBody, T> parse) {
    }

    /** Handles the POST on {@code context} with the business {@code step} for its validated body. */
    public <T> void handle(RoutingContext context, Body<T> spec, Function<T, DurableOperation> step) {
        try {
            HttpServerRequest http = context.request();
            requireJson(http.headers().getAll(HttpHeaders.CONTENT_TYPE));
            IdempotencyKey key = IdempotencyKey.parse(http.headers().getAll(IdempotencyKey.HEADER));
            // read by the body handler reactive routes put ahead of every @Route (at most
            // quarkus.http.limits.max-body-size; DeclaredBodyLimit refused a declared oversize earlier)
            Buffer bytes = context.body().buffer();
            JsonBody json = JsonBody.parse(bytes == null ? null : bytes.getBytes(), maxBodyBytes, spec.members());
            T body = spec.parse().apply(json);
            IdempotentRequest request = IdempotentRequest.of(caller.clientId(context), key, "POST",
                    resourcePath(context.normalizedPath()), json.tree());
            Duration wait = capped(PreferWait.of(http.headers().getAll(PreferWait.PREFER)));
            executor.execute(request, step.apply(body), wait).subscribe().with(
                    outcome -> send(context.response(), outcome, wait),
                    failure -> fail(context, failure));
        } catch (RuntimeException e) {
            fail(context, e);
        }
    }

    /**
     * The path as the fingerprint compares it: the resource, not its spelling. Ids are UUIDs, which
     * name the same account in either case, the rest of an API path is lower case, and a trailing
     * slash names the same resource; a command's path is written so ({@code PaymentCommand}).
     */
    static String resourcePath(String path) {
        String lower = path.toLowerCase(Locale.ROOT);
        return lower.length() > 1 && lower.endsWith("/") ? lower.substring(0, lower.length() - 1) : lower;
    }

    private Duration capped(Duration wait) {
        return wait.compareTo(maxWait) > 0 ? maxWait : wait;
    }

    /** An outcome as HTTP: its answer, and the headers that say what kind of answer it is. */
    static void send(HttpServerResponse response, Outcome outcome, Duration wait) {
        if (outcome instanceof Outcome.Recorded recorded && recorded.waited()) {
            response.putHeader(PreferWait.APPLIED, PreferWait.applied(wait));
        }
        if (outcome instanceof Outcome.InFlight inFlight) {
            response.putHeader(RETRY_AFTER, Long.toString(inFlight.retryAfterSeconds()));
        } else if (outcome instanceof Outcome.Unavailable unavailable) {
            response.putHeader(RETRY_AFTER, Long.toString(unavailable.retryAfterSeconds()));
        }
        outcome.response().send(response, outcome instanceof Outcome.Recorded recorded && recorded.replayed());
    }

    /**
     * A POST body must be declared {@code application/json}, in UTF-8 when a charset is named; a
     * missing, other or malformed {@code Content-Type} is 415, and so is one sent twice: RFC 9110
     * (5.3) reads two lines as the list of both, which names no one media type.
     */
    static void requireJson(List<String> contentTypes) {
        String contentType = contentTypes.size() == 1 ? contentTypes.get(0) : null;
        MediaType type;
        try {
            // RFC 9110 allows white space before a parameter's ';', which MediaType.valueOf keeps in the subtype
            type = contentType == null ? null : MediaType.valueOf(OWS_BEFORE_PARAMETER.matcher(contentType).replaceAll(";"));
        } catch (IllegalArgumentException malformed) {
            type = null;
        }
        String charset = type == null ? null : type.getParameters().get(MediaType.CHARSET_PARAMETER);
        if (type == null || !type.isCompatible(MediaType.APPLICATION_JSON_TYPE) || type.isWildcardType()
                || type.isWildcardSubtype() || (charset != null && !charset.equalsIgnoreCase("utf-8"))) {
            throw new ProblemException(ProblemMapper.unsupportedMediaType());
        }
    }

    private static void fail(RoutingContext context, Throwable failure) {
        if (!context.response().ended()) {
            ProblemMapper.send(context.response(), ProblemMapper.failure(failure));
        }
    }
}
