package dev.ledger.transfer;

import dev.ledger.input.JsonBody;
import dev.ledger.transaction.PostTransactionRequest;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;

/** Body of {@code POST /transfers/{id}/reversals}: both members optional, {@code {}} gives back all that is left. */
// its components are read at run time (JsonBody.members), in a native executable too
@RegisterForReflection
@Schema(name = "ReverseTransferRequest", additionalProperties = Schema.False.class)
public record ReverseTransferRequest(
        @Schema(minimum = "1", maximum = "1000000000000000", nullable = true, example = "500",
                description = "What goes back, at most postedAmount - reversedAmount (more is 422 reversal-exceeds-transfer); "
                        + "absent: all that is left")
        Long amount,
        @Schema(maxLength = 255, nullable = true, example = "refund-31") String reference) implements TransferChange.Fields {

    public static final List<String> MEMBERS = JsonBody.members(ReverseTransferRequest.class);

    public static ReverseTransferRequest from(JsonBody body) {
        return new ReverseTransferRequest(body.optionalLong("amount", 1, PostTransactionRequest.MAX_AMOUNT),
                body.optionalString("reference", PostTransactionRequest.MAX_REFERENCE));
    }
}
