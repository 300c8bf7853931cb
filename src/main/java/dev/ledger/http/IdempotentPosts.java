package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.DurableOperation;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentExecutor;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.OutcomeMetrics;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.input.JsonBody;
import dev.ledger.input.JsonMediaType;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemMapper;
import io.netty.handler.codec.DateFormatter;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Date;
import java.util.List;

import static dev.ledger.http.OpenApiText.EXPIRES;
import static dev.ledger.http.OpenApiText.REPLAYED;

/**
 * What every POST does, in the order API.md implies (authentication, then {@code Accept}, are decided
 * before, by the HTTP layer): 415 unless the body is declared {@code application/json}, the
 * {@code Idempotency-Key} header, then the body (size, strict JSON and the endpoint's own rules) —
 * 400s and 413, nothing reserved — and then the idempotent execution of the
 * business step ({@link IdempotentExecutor}), whose answer is sent as it was recorded, with
 * {@code Idempotent-Replayed}, {@code Retry-After} and {@code Preference-Applied} saying what kind of
 * answer it is, and {@code Idempotency-Expires} on every recorded one.
 *
 * <p>The POSTs are Vert.x routes ({@code @Route}), not JAX-RS resources: their answers are recorded
 * bytes, which need no entity writer, and a replay, the most frequent retry, goes through no resource
 * machinery (docs/performance.md measures what that saves).
 */
@ApplicationScoped
public class IdempotentPosts {
    private static final String RETRY_AFTER = "Retry-After";

    private final IdempotentExecutor executor;
    private final Caller caller;
    private final int maxBodyBytes;
    private final OutcomeMetrics.Door metrics;

    public IdempotentPosts(IdempotentExecutor executor, Caller caller, LedgerConfig config, OutcomeMetrics metrics) {
        this.executor = executor;
        this.caller = caller;
        this.maxBodyBytes = config.request().maxBodyBytes();
        this.metrics = metrics.door("http");
    }

    /** A POST's validated body, ready for the engine: the request its key stands for, and its business step. */
    public record Post(IdempotentRequest request, DurableOperation step) {
    }

    /** Reads a POST's body, whose members are among those allowed: throws 400 problems. */
    @FunctionalInterface
    public interface Reader {
        Post read(JsonBody body, String client, IdempotencyKey key);
    }

    /** Handles the POST on {@code context}: its body may have {@code members}, and {@code reader} reads it. */
    public void handle(RoutingContext context, List<String> members, Reader reader) {
        try {
            HttpServerRequest http = context.request();
            requireJson(http.headers().getAll(HttpHeaders.CONTENT_TYPE));
            IdempotencyKey key = IdempotencyKey.parse(http.headers().getAll(IdempotencyKey.HEADER));
            // read by the body handler reactive routes put ahead of every @Route (at most
            // quarkus.http.limits.max-body-size; DeclaredBodyLimit refused a declared oversize earlier)
            Buffer bytes = context.body().buffer();
            JsonBody json = JsonBody.parse(bytes == null ? null : bytes.getBytes(), maxBodyBytes, members);
            Post post = reader.read(json, caller.clientId(context), key);
            long start = System.nanoTime();
            executor.execute(post.request(), post.step(), PreferWait.of(http.headers().getAll(PreferWait.PREFER)))
                    .subscribe().with(outcome -> {
                        metrics.record(outcome, start);
                        send(context.response(), outcome);
                    }, failure -> {
                        metrics.failed(start);
                        fail(context, failure);
                    });
        } catch (RuntimeException e) {
            fail(context, e);
        }
    }

    /** An outcome as HTTP: its answer, and the headers that say what kind of answer it is. */
    static void send(HttpServerResponse response, Outcome outcome) {
        boolean replayed = false;
        if (outcome instanceof Outcome.Recorded recorded) {
            replayed = recorded.replayed();
            if (recorded.waited() != null) {
                response.putHeader(PreferWait.APPLIED, PreferWait.applied(recorded.waited()));
            }
            if (recorded.response().expiresAt() != null) {
                response.putHeader(EXPIRES, DateFormatter.format(Date.from(recorded.response().expiresAt())));
            }
        } else if (outcome instanceof Outcome.InFlight inFlight) {
            response.putHeader(RETRY_AFTER, Long.toString(inFlight.retryAfterSeconds()));
        } else if (outcome instanceof Outcome.Unavailable unavailable) {
            response.putHeader(RETRY_AFTER, Long.toString(unavailable.retryAfterSeconds()));
        }
        RecordedResponse answer = outcome.response();
        response.setStatusCode(answer.status()).putHeader(HttpHeaders.CONTENT_TYPE, answer.contentType());
        if (answer.location() != null && !answer.location().isEmpty()) {
            response.putHeader(HttpHeaders.LOCATION, answer.location());
        }
        if (replayed) {
            response.putHeader(REPLAYED, "true");
        }
        response.end(Buffer.buffer(answer.body()));
    }

    /**
     * A POST body must be declared JSON ({@link JsonMediaType}), on exactly one {@code Content-Type} line: a
     * missing, other or malformed one is 415, and so is one sent twice: RFC 9110 (5.3) reads two lines as
     * the list of both, which names no one media type.
     */
    static void requireJson(List<String> contentTypes) {
        if (contentTypes.size() != 1 || !JsonMediaType.isJson(contentTypes.get(0))) {
            throw new ProblemException(ProblemMapper.unsupportedMediaType());
        }
    }

    private static void fail(RoutingContext context, Throwable failure) {
        if (!context.response().ended()) {
            ProblemMapper.send(context.response(), ProblemMapper.failure(failure));
        }
    }
}
