package dev.ledger.transfer;

import dev.ledger.input.JsonBody;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import dev.ledger.transaction.PostTransactionRequest;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;
import java.util.UUID;

/** Body of {@code POST /transfers}, read strictly; the defaults ({@code pending} false, a hold's 86400 s) applied. */
// its components are read at run time (JsonBody.members), in a native executable too
@RegisterForReflection
@Schema(name = "CreateTransferRequest", additionalProperties = Schema.False.class)
public record CreateTransferRequest(
        @Schema(required = true, type = SchemaType.STRING, format = "uuid", example = "3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01",
                description = "The account the amount leaves: one of the caller's")
        UUID debitAccountId,
        @Schema(required = true, type = SchemaType.STRING, format = "uuid", example = "77ab2c4d-6e8f-4a1b-9c3d-5e7f9a1b3c5d",
                description = "The account the amount arrives in: another of the caller's, in the same currency")
        UUID creditAccountId,
        @Schema(required = true, minimum = "1", maximum = "1000000000000000", example = "1250",
                description = "Integer minor units (cents); not a float or a string") long amount,
        @Schema(maxLength = 255, nullable = true, example = "order-8812") String reference,
        @Schema(defaultValue = "false", description = "true: a hold, settled later by a post or a void, or expiring")
        boolean pending,
        @Schema(minimum = "1", maximum = "604800", defaultValue = "86400",
                description = "A hold's life in seconds; only with `pending: true`") long timeoutSeconds,
        @Schema(minimum = "1", maximum = "9223372036854775807", nullable = true,
                description = "The sequence of the debit leg's entry in its account, checked as a transaction's; absent: its "
                        + "lastSequence + 1. Not with `pending: true` (the post takes it)")
        Long debitSequence,
        @Schema(minimum = "1", maximum = "9223372036854775807", nullable = true,
                description = "The sequence of the credit leg's entry in its account, as `debitSequence`")
        Long creditSequence) {

    public static final long MAX_TIMEOUT_SECONDS = 604_800;
    public static final long DEFAULT_TIMEOUT_SECONDS = 86_400;
    public static final List<String> MEMBERS = JsonBody.members(CreateTransferRequest.class);

    /** The body's fields, or a 400 naming what is wrong. */
    public static CreateTransferRequest from(JsonBody body) {
        UUID debit = body.requiredUuid("debitAccountId", "an account's id");
        UUID credit = body.requiredUuid("creditAccountId", "an account's id");
        long amount = body.requiredLong("amount", 1, PostTransactionRequest.MAX_AMOUNT);
        String reference = body.optionalString("reference", PostTransactionRequest.MAX_REFERENCE);
        boolean pending = Boolean.TRUE.equals(body.optionalBoolean("pending"));
        Long timeout = body.optionalLong("timeoutSeconds", 1, MAX_TIMEOUT_SECONDS);
        Long debitSequence = body.optionalLong("debitSequence", 1, Long.MAX_VALUE);
        Long creditSequence = body.optionalLong("creditSequence", 1, Long.MAX_VALUE);
        if (debit.equals(credit)) {
            throw invalid("'debitAccountId' and 'creditAccountId' must be two different accounts");
        }
        if (timeout != null && !pending) {
            throw invalid("'timeoutSeconds' is allowed only with \"pending\": true");
        }
        if (pending && (debitSequence != null || creditSequence != null)) {
            throw invalid("A hold writes no entry: 'debitSequence' and 'creditSequence' belong to its post, not to "
                    + "\"pending\": true");
        }
        return new CreateTransferRequest(debit, credit, amount, reference, pending,
                timeout == null ? DEFAULT_TIMEOUT_SECONDS : timeout, debitSequence, creditSequence);
    }

    private static ProblemException invalid(String detail) {
        return new ProblemException(ProblemType.INVALID_REQUEST, detail);
    }
}
