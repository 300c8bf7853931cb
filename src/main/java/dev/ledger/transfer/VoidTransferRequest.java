package dev.ledger.transfer;

import dev.ledger.input.JsonBody;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;

/** Body of {@code POST /transfers/{id}/void}: {@code {}}, no member. */
@RegisterForReflection
@Schema(name = "VoidTransferRequest", additionalProperties = Schema.False.class, description = "`{}`: a void has no member")
public record VoidTransferRequest() implements TransferChange.Fields {
    public static final List<String> MEMBERS = JsonBody.members(VoidTransferRequest.class);

    public static VoidTransferRequest from(JsonBody body) {
        return new VoidTransferRequest();
    }
}
