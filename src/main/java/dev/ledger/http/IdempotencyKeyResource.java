package dev.ledger.http;

import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.KeyLookup;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;

import static dev.ledger.http.OpenApiText.*;

/**
 * {@code GET /idempotency-keys/{key}}: what became of one of the caller's keys ({@link KeyLookup}), for a client
 * that lost an answer, or the request with it. Another client's key is a different key, so it is not found.
 */
@Path("/idempotency-keys")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Idempotency keys")
@SecurityRequirement(name = API_KEY)
public class IdempotencyKeyResource {
    private final KeyLookup lookup;
    private final Caller caller;

    public IdempotencyKeyResource(KeyLookup lookup, Caller caller) {
        this.lookup = lookup;
        this.caller = caller;
    }

    @GET
    @Path("/{key}")
    @Operation(operationId = "getIdempotencyKey", summary = "Look a key up",
            description = "What became of one of the caller's keys: `completed`, with the recorded answer's `status` and "
                    + "`location` (send the request again with the key to get the answer itself, as a replay), or "
                    + "`in-flight`. Answered from PostgreSQL, so a completed key is found while Redis is down.")
    @APIResponse(responseCode = "200", description = "The key's state",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = IdempotencyKeyView.class),
                    examples = {
                            @ExampleObject(name = "completed", summary = "A recorded answer", value = """
                                    {"key": "order-8812", "state": "completed", "method": "POST",
                                     "path": "/accounts/3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01/transactions", "status": 201,
                                     "location": "/accounts/3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01/transactions/9a1e4c7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c",
                                     "createdAt": "2026-11-21T10:00:01Z", "expiresAt": "2026-11-22T10:00:01Z"}"""),
                            @ExampleObject(name = "refused", summary = "A recorded refusal", value = """
                                    {"key": "order-8813", "state": "completed", "method": "POST",
                                     "path": "/accounts/3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01/transactions", "status": 422,
                                     "location": null, "createdAt": "2026-11-21T10:00:02Z", "expiresAt": "2026-11-22T10:00:02Z"}"""),
                            @ExampleObject(name = "in-flight", summary = "A request still in flight", value = """
                                    {"key": "order-8814", "state": "in-flight", "method": "POST", "path": "/accounts",
                                     "status": null, "location": null, "createdAt": "2026-11-21T10:00:03Z",
                                     "expiresAt": "2026-11-21T10:00:33Z"}""")}))
    public Uni<IdempotencyKeyView> get(@Parameter(description = KEY_LOOKUP_TEXT, example = "order-8812",
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = IdempotencyKey.MAX_LENGTH, pattern = "^[!#-~]+$"))
                                       @RestPath String key) {
        IdempotencyKey parsed = IdempotencyKey.inPath(key);
        return lookup.find(caller.clientId(), parsed)
                .onItem().ifNull().failWith(() -> new ProblemException(ProblemType.IDEMPOTENCY_KEY_NOT_FOUND,
                        "No such Idempotency-Key: never used, or expired"))
                .map(state -> IdempotencyKeyView.of(parsed.value(), state));
    }
}
