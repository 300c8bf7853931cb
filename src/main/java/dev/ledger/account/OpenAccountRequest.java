package dev.ledger.account;

import dev.ledger.input.JsonBody;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;

/** Body of {@code POST /accounts}. */
// its components are read at run time (JsonBody.members), in a native executable too
@RegisterForReflection
@Schema(name = "OpenAccountRequest", additionalProperties = Schema.False.class)
public record OpenAccountRequest(
        @Schema(required = true, pattern = "^[A-Z]{3}$", example = "EUR",
                description = "ISO-4217 style code: exactly three upper-case letters") String currency) {

    static final List<String> MEMBERS = JsonBody.members(OpenAccountRequest.class);

    static OpenAccountRequest from(JsonBody body) {
        String currency = body.requiredString("currency");
        if (!currency.matches("[A-Z]{3}")) {
            throw new ProblemException(ProblemType.INVALID_REQUEST,
                    "'currency' must be exactly three upper-case letters A-Z, such as EUR");
        }
        return new OpenAccountRequest(currency);
    }
}
