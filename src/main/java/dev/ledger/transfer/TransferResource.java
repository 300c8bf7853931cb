package dev.ledger.transfer;

import dev.ledger.http.Caller;
import dev.ledger.input.Uuids;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestPath;

import static dev.ledger.http.OpenApiText.*;

@Path("/transfers")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Transfers")
@SecurityRequirement(name = API_KEY)
public class TransferResource {
    private final TransferService service;
    private final Caller caller;

    public TransferResource(TransferService service, Caller caller) {
        this.service = service;
        this.caller = caller;
    }

    @GET
    @Path("/{id}")
    @Operation(operationId = "getTransfer", summary = "Read a transfer",
            description = "The transfer as it is now: its status (a hold past its `expiresAt` is expired, released or not "
                    + "yet), what was posted and what reversals gave back.")
    @APIResponse(responseCode = "200", description = "The transfer",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = TransferView.class)))
    public Uni<TransferView> get(@Parameter(description = TRANSFER_ID, schema = @Schema(type = SchemaType.STRING, format = "uuid"))
                                 @RestPath String id) {
        return Uuids.parse(id)
                .map(uuid -> service.find(uuid, caller.clientId()))
                .orElseGet(() -> Uni.createFrom().failure(TransferService.notFound()));
    }
}
