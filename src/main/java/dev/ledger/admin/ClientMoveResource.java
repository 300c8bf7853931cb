package dev.ledger.admin;

import dev.ledger.config.LedgerConfig;
import dev.ledger.http.Caller;
import dev.ledger.input.JsonBody;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import dev.ledger.shard.ClientMoves;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.util.List;
import java.util.Set;

import static dev.ledger.http.OpenApiText.API_KEY;

/**
 * {@code POST /admin/client-moves}: an operator moves a client to another shard ({@link ClientMoves};
 * docs/operations.md, "Moving a client to another shard"). Only the clients {@code ledger.moves.operators} names may;
 * to every other caller the path does not exist (404).
 */
@Path("/admin/client-moves")
@Tag(name = "Operations")
@SecurityRequirement(name = API_KEY)
public class ClientMoveResource {
    private static final List<String> MEMBERS = List.of("client", "to");
    private static final int MAX_BODY_BYTES = 4096;

    private final ClientMoves moves;
    private final Caller caller;
    private final Set<String> operators;

    public ClientMoveResource(ClientMoves moves, Caller caller, LedgerConfig config) {
        this.moves = moves;
        this.caller = caller;
        this.operators = Set.copyOf(config.moves().operators().orElse(List.of()));
    }

    /** The request: which client, to which shard. */
    @Schema(name = "ClientMove")
    public record Request(@Schema(description = "The client id", example = "globex") String client,
                          @Schema(description = "The shard to move it to: default, or a name of ledger.shards.*", example = "eu2") String to) {
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(operationId = "moveClient", summary = "Move a client to another shard (operators only)",
            description = "Fences the client on its shard (its requests answer 503 with Retry-After, its commands wait), "
                    + "copies its accounts, transfers, entries, idempotency records and unpublished events to the target, "
                    + "switches its placement for every instance, and deletes its rows on the old shard. Other clients never "
                    + "pause; the client pauses at most `ledger.moves.max-pause`: a copy that cannot finish within it is "
                    + "rolled back, the client stays where it was, served, and the answer is 400 `invalid-request` saying so "
                    + "(503 when a lock on the old shard was not granted in time: send it again). "
                    + "Safe to send again: a client on the target already is answered `moved: false`. Only the "
                    + "clients `ledger.moves.operators` names may call it; to others it does not exist (404).")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Request.class),
            examples = @ExampleObject(name = "move", value = "{\"client\": \"globex\", \"to\": \"eu2\"}")))
    @APIResponse(responseCode = "200", description = "Moved, or on the target already",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = ClientMoves.Moved.class),
                    examples = @ExampleObject(name = "moved", value = """
                            {"client": "globex", "from": "default", "to": "eu2", "moved": true, "accounts": 12,
                             "transfers": 40, "entries": 5210, "records": 5262, "events": 3, "pauseMillis": 184}""")))
    public Uni<ClientMoves.Moved> move(byte[] body) {
        if (!operators.contains(caller.clientId())) {
            return Uni.createFrom().failure(new ProblemException(ProblemType.NOT_FOUND, "No such resource"));
        }
        JsonBody request = JsonBody.parse(body, MAX_BODY_BYTES, MEMBERS);
        String client = request.requiredString("client");
        String to = request.requiredString("to");
        return Uni.createFrom().deferred(() -> moves.move(client, to))
                .onFailure(ClientMoves.Refused.class).transform(refused -> new ProblemException(((ClientMoves.Refused) refused).retry()
                        ? ProblemType.SERVICE_UNAVAILABLE : ProblemType.INVALID_REQUEST, refused.getMessage()));
    }
}
