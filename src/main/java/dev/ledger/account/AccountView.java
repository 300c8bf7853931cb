package dev.ledger.account;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.time.Instant;
import java.util.UUID;

@RegisterForReflection
@Schema(name = "Account")
public record AccountView(
        UUID id,
        @Schema(example = "EUR", pattern = "^[A-Z]{3}$") String currency,
        @Schema(description = "Minor units (cents)", minimum = "0") long balance,
        @Schema(description = "Sequence of the last applied transaction; 0 before any") long lastSequence,
        Instant createdAt) {

    static AccountView of(Account account) {
        return new AccountView(account.id, account.currency, account.balance, account.lastSequence, account.createdAt);
    }

    /** The account as it was opened: what the open request answered, and what its replays answer. */
    static AccountView opened(UUID id, String currency, Instant createdAt) {
        return new AccountView(id, currency, 0, 0, createdAt);
    }
}
