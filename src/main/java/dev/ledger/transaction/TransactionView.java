package dev.ledger.transaction;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.time.Instant;
import java.util.UUID;

@RegisterForReflection
@Schema(name = "Transaction")
public record TransactionView(
        UUID id,
        UUID accountId,
        TransactionType type,
        @Schema(description = "Minor units (cents)") long amount,
        long sequence,
        @Schema(nullable = true) String reference,
        @Schema(description = "The account's balance right after this transaction") long balanceAfter,
        Instant createdAt) {

    static TransactionView of(LedgerEntry entry) {
        return new TransactionView(entry.id, entry.accountId, TransactionType.valueOf(entry.type), entry.amount,
                entry.sequence, entry.reference, entry.balanceAfter, entry.createdAt);
    }
}
