package dev.ledger.transfer;

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
 * The transfer POSTs: create, post, void, reverse. Vert.x routes rather than JAX-RS methods, like every
 * POST ({@link IdempotentPosts} says why); {@link TransferResource} serves the read.
 */
@Tag(name = "Transfers")
@SecurityRequirement(name = API_KEY)
public class TransferRoutes {
    private final TransferService service;
    private final IdempotentPosts posts;

    public TransferRoutes(TransferService service, IdempotentPosts posts) {
        this.service = service;
        this.posts = posts;
    }

    @Route(path = "/transfers", methods = Route.HttpMethod.POST)
    @Operation(operationId = "createTransfer", summary = "Move money between two accounts, or hold it",
            description = "Not pending: both balances change at once, each leg an entry (with `transferId`) in its account. "
                    + "Pending (a hold): no balance moves; the amount is added to the debit account's `pendingDebits` and the "
                    + "credit account's `pendingCredits` until a post, a void or its expiry. Checked against the debit account's "
                    + "`available`. Refusals, when several apply: 400, 404, 422 `currency-mismatch`, 409 `stale-sequence`, 422 "
                    + "`insufficient-funds`, 422 `balance-limit-exceeded`. The answer, success or refusal, is recorded with the "
                    + "key and replayed to a retry.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = CreateTransferRequest.class)))
    @APIResponse(responseCode = "201", description = "Created (or replayed): the transfer as it was made",
            headers = {@Header(name = "Location", description = "`/transfers/{id}`", schema = @Schema(type = SchemaType.STRING)),
                    @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true"))},
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransferView.class)))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT, example = KEY_PLACEHOLDER,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = KEY_MAX_ENCODED, pattern = KEY_PATTERN))
    void create(RoutingContext context) {
        posts.handle(context, CreateTransferRequest.MEMBERS, (body, client, key) -> {
            NewTransfer transfer = NewTransfer.overHttp(body);
            return new IdempotentPosts.Post(transfer.request(client, key), record -> service.create(record, transfer));
        });
    }

    @Route(path = "/transfers/:id/post", methods = Route.HttpMethod.POST)
    @Operation(operationId = "postTransfer", summary = "Post a hold, in full or in part",
            description = "Moves `amount` (default: all of the hold) as a transfer does, each leg an entry, and releases the "
                    + "rest of the hold. Refusals, when several apply: 404, 409 (the transfer's state, then `stale-sequence`), "
                    + "422 `amount-exceeds-pending`, 422 `balance-limit-exceeded`. A hold is expired from its `expiresAt` on, "
                    + "whether or not anything released it yet. Recorded with the key and replayed.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = PostTransferRequest.class)))
    @APIResponse(responseCode = "200", description = "Posted (or replayed): the transfer as the post left it",
            headers = @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true")),
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransferView.class)))
    @Parameter(name = "id", in = ParameterIn.PATH, required = true, description = TRANSFER_ID,
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT, example = KEY_PLACEHOLDER,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = KEY_MAX_ENCODED, pattern = KEY_PATTERN))
    void post(RoutingContext context) {
        change(context, TransferChange.Kind.POST);
    }

    @Route(path = "/transfers/:id/void", methods = Route.HttpMethod.POST)
    @Operation(operationId = "voidTransfer", summary = "Void a hold",
            description = "Releases the whole hold: no balance moves. Refusals: 404, then 409 (the transfer's state). "
                    + "Recorded with the key and replayed.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = VoidTransferRequest.class)))
    @APIResponse(responseCode = "200", description = "Voided (or replayed): the transfer as the void left it",
            headers = @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true")),
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransferView.class)))
    @Parameter(name = "id", in = ParameterIn.PATH, required = true, description = TRANSFER_ID,
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT, example = KEY_PLACEHOLDER,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = KEY_MAX_ENCODED, pattern = KEY_PATTERN))
    void voidHold(RoutingContext context) {
        change(context, TransferChange.Kind.VOID);
    }

    @Route(path = "/transfers/:id/reversals", methods = Route.HttpMethod.POST)
    @Operation(operationId = "reverseTransfer", summary = "Give back a posted transfer, in full or in part",
            description = "A new posted transfer from the credit account back to the debit account, with `reversalOf` the "
                    + "original's id; the original's `reversedAmount` grows by it. Refusals, when several apply: 404, 409 "
                    + "`transfer-not-posted`, 422 `reversal-exceeds-transfer`, 422 `insufficient-funds` (the credit account's "
                    + "`available`), 422 `balance-limit-exceeded`. Recorded with the key and replayed.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
            schema = @Schema(implementation = ReverseTransferRequest.class)))
    @APIResponse(responseCode = "201", description = "Reversed (or replayed): the new transfer as it was made",
            headers = {@Header(name = "Location", description = "`/transfers/{newId}`", schema = @Schema(type = SchemaType.STRING)),
                    @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true"))},
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransferView.class)))
    @Parameter(name = "id", in = ParameterIn.PATH, required = true, description = TRANSFER_ID,
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT, example = KEY_PLACEHOLDER,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = KEY_MAX_ENCODED, pattern = KEY_PATTERN))
    void reverse(RoutingContext context) {
        change(context, TransferChange.Kind.REVERSE);
    }

    private void change(RoutingContext context, TransferChange.Kind kind) {
        posts.handle(context, kind.members(), (body, client, key) -> {
            TransferChange change = TransferChange.overHttp(kind, context.normalizedPath(), context.pathParam("id"), body);
            return new IdempotentPosts.Post(change.request(client, key), record -> service.change(record, change));
        });
    }
}
