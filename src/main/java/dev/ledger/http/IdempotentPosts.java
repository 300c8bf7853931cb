package dev.ledger.http;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.DurableOperation;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentExecutor;
import dev.ledger.idempotency.IdempotentRequest;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;

import java.util.List;

import java.util.function.Function;

/**
 * What every POST does before its business step, in the order API.md implies: the
 * {@code Idempotency-Key} header, then the body (both 400s, nothing reserved), then the
 * idempotent execution of the business step.
 */
@ApplicationScoped
public class IdempotentPosts {
    private final IdempotentExecutor executor;
    private final Caller caller;
    private final LedgerConfig config;

    public IdempotentPosts(IdempotentExecutor executor, Caller caller, LedgerConfig config) {
        this.executor = executor;
        this.caller = caller;
        this.config = config;
    }

    /**
     * @param members the body's allowed members
     * @param parse   reads the validated request from the body (throws 400 problems)
     * @param step    the business step for the parsed request
     */
    public <T> Uni<Response> handle(List<String> keyHeader, String path, byte[] body, List<String> members,
                                    Function<JsonBody, T> parse, Function<T, DurableOperation> step) {
        IdempotencyKey key = IdempotencyKey.parse(keyHeader);
        JsonBody json = JsonBody.parse(body, config.request().maxBodyBytes(), members);
        T request = parse.apply(json);
        IdempotentRequest idempotent = IdempotentRequest.of(caller.clientId(), key, "POST", path, json.tree());
        return executor.execute(idempotent, step.apply(request));
    }
}
