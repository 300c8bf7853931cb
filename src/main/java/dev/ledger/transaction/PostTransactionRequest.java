package dev.ledger.transaction;

import dev.ledger.input.JsonBody;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;

/** Body of {@code POST /accounts/{id}/transactions}. */
// its components are read at run time (JsonBody.members), in a native executable too
@RegisterForReflection
@Schema(name = "PostTransactionRequest", additionalProperties = Schema.False.class)
public record PostTransactionRequest(
        @Schema(required = true, example = "CREDIT") TransactionType type,
        @Schema(required = true, minimum = "1", maximum = "1000000000000000", example = "10000",
                description = "Integer minor units (cents); not a float or a string") long amount,
        @Schema(required = true, minimum = "1", maximum = "9223372036854775807", example = "1",
                description = "Applied only if greater than the account's lastSequence (0 on a new account); gaps are allowed")
        long sequence,
        @Schema(maxLength = 255, nullable = true, example = "invoice-7") String reference) {

    public static final long MAX_AMOUNT = 1_000_000_000_000_000L;
    public static final int MAX_REFERENCE = 255;
    public static final List<String> MEMBERS = JsonBody.members(PostTransactionRequest.class);

    public static PostTransactionRequest from(JsonBody body) {
        String type = body.requiredString("type");
        if (!type.equals("DEBIT") && !type.equals("CREDIT")) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "'type' must be DEBIT or CREDIT");
        }
        return new PostTransactionRequest(TransactionType.valueOf(type),
                body.requiredLong("amount", 1, MAX_AMOUNT),
                body.requiredLong("sequence", 1, Long.MAX_VALUE),
                body.optionalString("reference", MAX_REFERENCE));
    }
}
