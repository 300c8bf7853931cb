package dev.ledger.transaction;

import dev.ledger.http.IdempotentPosts;
import dev.ledger.http.PathIds;
import dev.ledger.problem.Problem;
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

import java.util.UUID;

import static dev.ledger.http.OpenApiText.*;

/**
 * {@code POST /accounts/{id}/transactions}: a Vert.x route rather than a JAX-RS method, like every
 * POST ({@link IdempotentPosts} says why); {@link TransactionResource} serves the reads.
 */
@Tag(name = "Transactions")
@SecurityRequirement(name = API_KEY)
public class TransactionPostRoute {
    private static final IdempotentPosts.Body<PostTransactionRequest> BODY =
            new IdempotentPosts.Body<>(PostTransactionRequest.MEMBERS, PostTransactionRequest::from);

    private final TransactionService service;
    private final IdempotentPosts posts;

    public TransactionPostRoute(TransactionService service, IdempotentPosts posts) {
        this.service = service;
        this.posts = posts;
    }

    @Route(path = "/accounts/:id/transactions", methods = Route.HttpMethod.POST)
    @Operation(operationId = "postTransaction", summary = "Post a debit or credit",
            description = "Applied only if sequence > the account's lastSequence and a debit does not overdraw. " + REPLAY)
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PostTransactionRequest.class)))
    @APIResponse(responseCode = "201", description = "Applied (or replayed)",
            headers = {@Header(name = "Location", description = "/accounts/{id}/transactions/{txId}", schema = @Schema(type = SchemaType.STRING)),
                    @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true"))},
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransactionView.class)))
    @APIResponse(responseCode = "400", description = BAD_POST + "; type must be DEBIT or CREDIT, amount 1..10^15, sequence >= 1, reference <= 255 characters",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "401", description = UNAUTHORIZED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "404", description = "account-not-found (recorded and replayed)",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "409", description = "stale-sequence: sequence <= lastSequence (member lastSequence; recorded and replayed); or " + IN_PROGRESS,
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "413", description = TOO_LARGE, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "415", description = UNSUPPORTED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "422", description = "insufficient-funds: the debit exceeds the balance (member balance; recorded and replayed); "
            + "balance-limit-exceeded: the credit would take the balance past 2^63-1 (recorded); or " + KEY_REUSED,
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "503", description = UNAVAILABLE, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT, example = KEY_PLACEHOLDER,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = 512, pattern = KEY_PATTERN))
    @Parameter(name = "id", in = ParameterIn.PATH, required = true, description = "The account's id (a UUID)",
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    void post(RoutingContext context) {
        // An id that is not a UUID names no account: the outcome is a recorded 404 like any unknown id.
        UUID accountId = PathIds.parse(context.pathParam("id")).orElse(null);
        posts.handle(context, BODY, request -> record -> service.post(record, accountId, request));
    }
}
