package dev.ledger.account;

import dev.ledger.http.IdempotentPosts;
import dev.ledger.idempotency.IdempotentRequest;
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
 * {@code POST /accounts}: a Vert.x route rather than a JAX-RS method, like every POST
 * ({@link IdempotentPosts} says why); {@link AccountResource} serves the reads.
 */
@Tag(name = "Accounts")
@SecurityRequirement(name = API_KEY)
public class AccountOpenRoute {
    private final AccountService service;
    private final IdempotentPosts posts;

    public AccountOpenRoute(AccountService service, IdempotentPosts posts) {
        this.service = service;
        this.posts = posts;
    }

    @Route(path = "/accounts", methods = Route.HttpMethod.POST)
    @Operation(operationId = "openAccount", summary = "Open an account",
            description = "A retry with the same Idempotency-Key and body answers the same account, as a replay.")
    @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = OpenAccountRequest.class)))
    @APIResponse(responseCode = "201", description = "Opened (or replayed)",
            headers = {@Header(name = "Location", description = "`/accounts/{id}`", schema = @Schema(type = SchemaType.STRING)),
                    @Header(name = REPLAYED, description = REPLAYED_TEXT, schema = @Schema(type = SchemaType.STRING, enumeration = "true"))},
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = AccountView.class)))
    @Parameter(name = KEY, in = ParameterIn.HEADER, required = true, description = KEY_TEXT, example = KEY_PLACEHOLDER,
            schema = @Schema(type = SchemaType.STRING, minLength = 1, maxLength = KEY_MAX_ENCODED, pattern = KEY_PATTERN))
    void open(RoutingContext context) {
        posts.handle(context, OpenAccountRequest.MEMBERS, (body, client, key) -> {
            OpenAccountRequest open = OpenAccountRequest.from(body);
            return new IdempotentPosts.Post(IdempotentRequest.of(client, key, "POST", context.normalizedPath(), body.tree()),
                    record -> service.open(record, open));
        });
    }
}
