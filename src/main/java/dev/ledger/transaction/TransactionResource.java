package dev.ledger.transaction;

import dev.ledger.http.Caller;
import dev.ledger.http.IdempotentPosts;
import dev.ledger.http.PathIds;
import dev.ledger.http.QueryParams;
import dev.ledger.account.AccountService;
import dev.ledger.problem.Problem;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.UriInfo;
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
import org.jboss.resteasy.reactive.RestPath;

import java.util.UUID;

import static dev.ledger.http.OpenApiText.*;

@Path("/accounts/{id}/transactions")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Transactions")
@SecurityRequirement(name = API_KEY)
public class TransactionResource {
    public static final int DEFAULT_LIMIT = 50;
    public static final int MAX_LIMIT = 500;

    private final TransactionService service;
    private final IdempotentPosts posts;
    private final Caller caller;

    public TransactionResource(TransactionService service, IdempotentPosts posts, Caller caller) {
        this.service = service;
        this.posts = posts;
        this.caller = caller;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Post a debit or credit",
            description = "Applied only if sequence > the account's lastSequence and a debit does not overdraw. " + REPLAY)
    @RequestBody(required = true, content = @Content(schema = @Schema(implementation = PostTransactionRequest.class)))
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
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = 512, pattern = KEY_PATTERN))
    public Uni<Response> post(@RestPath String id, @Context HttpServerRequest http, @Context UriInfo uri, byte[] body) {
        // An id that is not a UUID names no account: the outcome is a recorded 404 like any unknown id.
        UUID accountId = PathIds.parse(id).orElse(null);
        return posts.handle(http.headers().getAll(KEY), uri.getPath(), body, PostTransactionRequest.MEMBERS, PostTransactionRequest::from,
                request -> record -> service.post(record, accountId, request));
    }

    @GET
    @Operation(summary = "List applied transactions", description = "Ascending by sequence, after the given sequence.")
    @APIResponse(responseCode = "200", description = "A page; next is the 'after' of the next page or null at the end",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransactionPage.class)))
    @APIResponse(responseCode = "400", description = "invalid-request: after or limit not an integer or out of range",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "401", description = UNAUTHORIZED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "404", description = "account-not-found",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @Parameter(name = "after", in = ParameterIn.QUERY, description = "Return transactions with sequence greater than this (default 0)",
            schema = @Schema(type = SchemaType.INTEGER, format = "int64", minimum = "0"))
    @Parameter(name = "limit", in = ParameterIn.QUERY, description = "Page size, 1-500 (default 50)",
            schema = @Schema(type = SchemaType.INTEGER, minimum = "1", maximum = "500"))
    public Uni<TransactionPage> list(@RestPath String id, @Context HttpServerRequest http) {
        // Raw parameters: an empty value (limit=) is an invalid value, not an absent one.
        long afterValue = QueryParams.integer("after", http.getParam("after"), 0, 0, Long.MAX_VALUE);
        int limitValue = (int) QueryParams.integer("limit", http.getParam("limit"), DEFAULT_LIMIT, 1, MAX_LIMIT);
        return PathIds.parse(id)
                .map(uuid -> service.list(uuid, caller.clientId(), afterValue, limitValue))
                .orElseGet(() -> Uni.createFrom().failure(AccountService.notFound()));
    }

    @GET
    @Path("/{txId}")
    @Operation(summary = "Read one transaction")
    @APIResponse(responseCode = "200", description = "The transaction",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransactionView.class)))
    @APIResponse(responseCode = "401", description = UNAUTHORIZED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "404", description = "account-not-found when the account is unknown or another client's; "
            + "transaction-not-found when the transaction is not in the account",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    public Uni<TransactionView> get(@RestPath String id, @RestPath String txId) {
        return PathIds.parse(id)
                .map(uuid -> service.find(uuid, caller.clientId(), PathIds.parse(txId).orElse(null)))
                .orElseGet(() -> Uni.createFrom().failure(AccountService.notFound()));
    }
}
