package dev.ledger.transaction;

import dev.ledger.http.Caller;
import dev.ledger.input.Uuids;
import dev.ledger.http.QueryParams;
import dev.ledger.account.AccountService;
import io.smallrye.mutiny.Uni;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Context;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.ParameterIn;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;


import static dev.ledger.http.OpenApiText.*;

@Path("/accounts/{id}/transactions")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Transactions")
@SecurityRequirement(name = API_KEY)
public class TransactionResource {
    public static final int DEFAULT_LIMIT = 50;
    public static final int MAX_LIMIT = 500;

    private final TransactionService service;
    private final Caller caller;

    public TransactionResource(TransactionService service, Caller caller) {
        this.service = service;
        this.caller = caller;
    }

    @GET
    @Operation(operationId = "listTransactions", summary = "List applied transactions",
            description = "Ascending by sequence, after the given sequence.")
    @APIResponse(responseCode = "200", description = "A page; `next` is the `after` of the next page, or null at the end",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransactionPage.class)))
    @Parameter(name = "id", in = ParameterIn.PATH, required = true, description = ACCOUNT_ID,
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    @Parameter(name = "after", in = ParameterIn.QUERY, description = "Return transactions with sequence greater than this (default 0)",
            schema = @Schema(type = SchemaType.INTEGER, format = "int64", minimum = "0"))
    @Parameter(name = "limit", in = ParameterIn.QUERY, description = "Page size, 1-500 (default 50)",
            schema = @Schema(type = SchemaType.INTEGER, format = "int32", minimum = "1", maximum = "500"))
    public Uni<TransactionPage> list(@RestPath String id, @Context HttpServerRequest http) {
        // Raw parameters: an empty value (limit=) is an invalid value, not an absent one. Only '&'
        // separates them, as in application/x-www-form-urlencoded (WHATWG URL); Netty's decoder also
        // splits on ';' unless told not to, which would read "limit=5;after=3" as two parameters.
        MultiMap query = http.params(true);
        long afterValue = QueryParams.integer("after", query.getAll("after"), 0, 0, Long.MAX_VALUE);
        int limitValue = (int) QueryParams.integer("limit", query.getAll("limit"), DEFAULT_LIMIT, 1, MAX_LIMIT);
        return Uuids.parse(id)
                .map(uuid -> service.list(uuid, caller.clientId(), afterValue, limitValue))
                .orElseGet(() -> Uni.createFrom().failure(AccountService.notFound()));
    }

    @GET
    @Path("/{txId}")
    @Operation(operationId = "getTransaction", summary = "Read one transaction",
            description = "One applied transaction of the caller's account.")
    @APIResponse(responseCode = "200", description = "The transaction",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransactionView.class)))
    @Parameter(name = "id", in = ParameterIn.PATH, required = true, description = ACCOUNT_ID,
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    @Parameter(name = "txId", in = ParameterIn.PATH, required = true, description = TRANSACTION_ID,
            schema = @Schema(type = SchemaType.STRING, format = "uuid"))
    public Uni<TransactionView> get(@RestPath String id, @RestPath String txId) {
        return Uuids.parse(id)
                .map(uuid -> service.find(uuid, caller.clientId(), Uuids.parse(txId).orElse(null)))
                .orElseGet(() -> Uni.createFrom().failure(AccountService.notFound()));
    }
}
