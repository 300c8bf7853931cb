package dev.ledger.transaction;

import dev.ledger.http.IdempotentPosts;
import io.quarkus.vertx.web.Route;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;


import static dev.ledger.http.OpenApiText.*;

/**
 * {@code POST /accounts/{id}/transactions}: a Vert.x route rather than a JAX-RS method, like every
 * POST ({@link IdempotentPosts} says why); {@link TransactionResource} serves the reads.
 */
@Tag(name = "Transactions")
@SecurityRequirement(name = API_KEY)
public class TransactionPostRoute {
    private final TransactionService service;
    private final IdempotentPosts posts;

    public TransactionPostRoute(TransactionService service, IdempotentPosts posts) {
        this.service = service;
        this.posts = posts;
    }

    @Route(path = "/accounts/:id/transactions", methods = Route.HttpMethod.POST)
    @Operation(operationId = "postTransaction", summary = "Post a debit or credit",
            description = "Applied only if `sequence` is greater than the account's `lastSequence` and a debit does not "
                    + "overdraw; when both fail, the sequence check wins. The answer, success or refusal, is recorded with "
                    + "the key and replayed to a retry.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PostTransactionRequest.class)))
    @APIResponse(responseCode = "201", description = "Applied (or replayed)",
            headers = {@Header(name = "Location", description = "`/accounts/{id}/transactions/{txId}`", schema = @Schema(type = SchemaType.STRING)),
                    @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true"))},
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransactionView.class)))
    @Parameter(name = "id", in = ParameterIn.PATH, required = true, description = ACCOUNT_ID,
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT, example = KEY_PLACEHOLDER,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = KEY_MAX_ENCODED, pattern = KEY_PATTERN))
    void post(RoutingContext context) {
        posts.handle(context, PostTransactionRequest.MEMBERS, (body, client, key) -> {
            Payment payment = Payment.overHttp(context.normalizedPath(), context.pathParam("id"), body);
            return new IdempotentPosts.Post(payment.request(client, key), record -> service.post(record, payment));
        });
    }
}
