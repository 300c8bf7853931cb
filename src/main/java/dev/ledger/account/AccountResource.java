package dev.ledger.account;

import dev.ledger.http.Caller;
import dev.ledger.http.IdempotentPosts;
import dev.ledger.http.PathIds;
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
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
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
    private final IdempotentPosts posts;
    private final Caller caller;

    public AccountResource(AccountService service, IdempotentPosts posts, Caller caller) {
        this.service = service;
        this.posts = posts;
        this.caller = caller;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Open an account", description = "A retry with the same Idempotency-Key and body returns the same account. " + REPLAY)
    @RequestBody(required = true, content = @Content(schema = @Schema(implementation = OpenAccountRequest.class)))
    @APIResponse(responseCode = "201", description = "Opened (or replayed)",
            headers = {@Header(name = "Location", description = "/accounts/{id}", schema = @Schema(type = SchemaType.STRING)),
                    @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true"))},
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = AccountView.class)))
    @APIResponse(responseCode = "400", description = BAD_POST, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "401", description = UNAUTHORIZED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "409", description = IN_PROGRESS, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "413", description = TOO_LARGE, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "415", description = UNSUPPORTED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "422", description = KEY_REUSED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "503", description = UNAVAILABLE, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = 512, pattern = KEY_PATTERN))
    public Uni<Response> open(@Context HttpServerRequest http, @Context UriInfo uri, byte[] body) {
        return posts.handle(http.headers().getAll(KEY), uri.getPath(), body, OpenAccountRequest.MEMBERS, OpenAccountRequest::from,
                request -> record -> service.open(record, request));
    }

    @GET
    @Path("/{id}")
    @Operation(summary = "Read an account")
    @APIResponse(responseCode = "200", description = "The account",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = AccountView.class)))
    @APIResponse(responseCode = "401", description = UNAUTHORIZED, content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "404", description = "account-not-found (unknown id, not a UUID, or another client's)",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    public Uni<AccountView> get(@RestPath String id) {
        return PathIds.parse(id)
                .map(uuid -> service.find(uuid, caller.clientId()))
                .orElseGet(() -> Uni.createFrom().failure(AccountService.notFound()));
    }
}
