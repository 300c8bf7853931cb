package dev.ledger.account;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.time.Instant;
import java.util.UUID;

@RegisterForReflection
@Schema(name = "Account", additionalProperties = Schema.False.class)
public record AccountView(
        @Schema(type = SchemaType.STRING, format = "uuid", example = "3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01") UUID id,
        @Schema(example = "EUR", pattern = "^[A-Z]{3}$") String currency,
        @Schema(description = "Minor units (cents)", minimum = "0", example = "10000") long balance,
        @Schema(description = "Minor units the account's live holds would take from it", minimum = "0", example = "0")
        @JsonInclude(JsonInclude.Include.NON_NULL) Long pendingDebits,
        @Schema(description = "Minor units the live holds of other accounts would bring it", minimum = "0", example = "0")
        @JsonInclude(JsonInclude.Include.NON_NULL) Long pendingCredits,
        @Schema(description = "balance - pendingDebits: what a debit, transfer or hold may take", minimum = "0", example = "10000")
        @JsonInclude(JsonInclude.Include.NON_NULL) Long available,
        @Schema(description = "Sequence of the last applied transaction; 0 before any", minimum = "0", example = "1")
        long lastSequence,
        @Schema(type = SchemaType.STRING, format = "date-time", example = "2026-11-21T10:00:00Z") Instant createdAt) {

    static AccountView of(Account account) {
        return new AccountView(account.id, account.currency, account.balance, account.pendingDebits, account.pendingCredits,
                account.balance - account.pendingDebits, account.lastSequence, account.createdAt);
    }

    /** The account as it was opened: what the open request answered, and what its replays answer. */
    public static AccountView opened(UUID id, String currency, Instant createdAt) {
        return new AccountView(id, currency, 0, 0L, 0L, 0L, 0, createdAt);
    }

    /**
     * The account as an open recorded before there were holds answered it, without {@code pendingDebits},
     * {@code pendingCredits} and {@code available}: what its replays answer, byte for byte.
     */
    public static AccountView openedBeforeHolds(UUID id, String currency, Instant createdAt) {
        return new AccountView(id, currency, 0, null, null, null, 0, createdAt);
    }
}
