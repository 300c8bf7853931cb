package dev.ledger.account;

import dev.ledger.http.Caller;
import dev.ledger.input.Uuids;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;

import static dev.ledger.http.OpenApiText.*;

@Path("/accounts")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Accounts")
@SecurityScheme(securitySchemeName = API_KEY, type = SecuritySchemeType.HTTP, scheme = "bearer", description = API_KEY_TEXT)
@SecurityRequirement(name = API_KEY)
public class AccountResource {
    private final AccountService service;
    private final Caller caller;

    public AccountResource(AccountService service, Caller caller) {
        this.service = service;
        this.caller = caller;
    }

    @GET
    @Path("/{id}")
    @Operation(operationId = "getAccount", summary = "Read an account",
            description = "The account with its balance and lastSequence, if it is the caller's.")
    @APIResponse(responseCode = "200", description = "The account",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = AccountView.class)))
    public Uni<AccountView> get(@Parameter(description = ACCOUNT_ID, schema = @Schema(type = SchemaType.STRING, format = "uuid"))
                                @RestPath String id) {
        return Uuids.parse(id)
                .map(uuid -> service.find(uuid, caller.clientId()))
                .orElseGet(() -> Uni.createFrom().failure(AccountService.notFound()));
    }
}
