package dev.ledger.transfer;

import dev.ledger.input.JsonBody;
import dev.ledger.transaction.PostTransactionRequest;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;

/** Body of {@code POST /transfers/{id}/post}: every member optional, {@code {}} posts the whole hold. */
// its components are read at run time (JsonBody.members), in a native executable too
@RegisterForReflection
@Schema(name = "PostTransferRequest", additionalProperties = Schema.False.class)
public record PostTransferRequest(
        @Schema(minimum = "1", maximum = "1000000000000000", nullable = true, example = "1000",
                description = "What moves, at most the hold's amount (more is 422 amount-exceeds-pending); absent: all of it. "
                        + "The rest of the hold is released")
        Long amount,
        @Schema(minimum = "1", maximum = "9223372036854775807", nullable = true,
                description = "The sequence of the debit leg's entry, checked as a transaction's; absent: lastSequence + 1")
        Long debitSequence,
        @Schema(minimum = "1", maximum = "9223372036854775807", nullable = true,
                description = "The sequence of the credit leg's entry, as `debitSequence`")
        Long creditSequence) implements TransferChange.Fields {

    public static final List<String> MEMBERS = JsonBody.members(PostTransferRequest.class);

    public static PostTransferRequest from(JsonBody body) {
        return new PostTransferRequest(body.optionalLong("amount", 1, PostTransactionRequest.MAX_AMOUNT),
                body.optionalLong("debitSequence", 1, Long.MAX_VALUE),
                body.optionalLong("creditSequence", 1, Long.MAX_VALUE));
    }
}
