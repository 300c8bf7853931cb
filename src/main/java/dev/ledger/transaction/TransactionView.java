package dev.ledger.transaction;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.quarkus.runtime.annotations.RegisterForReflection;
import io.vertx.mutiny.sqlclient.Row;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.time.Instant;
import java.util.UUID;

@RegisterForReflection
@Schema(name = "Transaction", additionalProperties = Schema.False.class)
public record TransactionView(
        @Schema(type = SchemaType.STRING, format = "uuid", example = "9a1e4c7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c") UUID id,
        @Schema(type = SchemaType.STRING, format = "uuid", example = "3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01") UUID accountId,
        TransactionType type,
        @Schema(description = "Minor units (cents)", minimum = "1", example = "10000") long amount,
        @Schema(minimum = "1", example = "1") long sequence,
        @Schema(nullable = true, example = "invoice-7") String reference,
        @Schema(description = "The account's balance right after this transaction", minimum = "0", example = "10000")
        long balanceAfter,
        @Schema(type = SchemaType.STRING, format = "date-time", example = "2026-11-21T10:00:01Z") Instant createdAt,
        @Schema(type = SchemaType.STRING, format = "uuid", description = "The transfer this entry is a leg of; absent on "
                + "a debit or credit posted on its own")
        @JsonInclude(JsonInclude.Include.NON_NULL) UUID transferId) {

    /**
     * The transaction of a row with the entry's columns as {@code ledger_post_transaction} names them:
     * what the 201 carried, rendered from the immutable entry (its replays, and its event, the same). Such an
     * entry is a debit or credit of its own, never a transfer's leg (a leg has no {@code transaction.applied} event).
     */
    public static TransactionView of(Row row) {
        return new TransactionView(row.getUUID("entry_id"), row.getUUID("account_id"),
                TransactionType.valueOf(row.getString("type")), row.getLong("amount"), row.getLong("sequence"),
                row.getString("reference"), row.getLong("balance_after"), row.getOffsetDateTime("created_at").toInstant(),
                null);
    }

    static TransactionView of(LedgerEntry entry) {
        return new TransactionView(entry.id, entry.accountId, TransactionType.valueOf(entry.type), entry.amount,
                entry.sequence, entry.reference, entry.balanceAfter, entry.createdAt, entry.transferId);
    }
}
