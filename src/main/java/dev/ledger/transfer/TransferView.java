package dev.ledger.transfer;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.vertx.mutiny.sqlclient.Row;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * A transfer as the API shows it. A recorded answer and an event show it at the moment of their change
 * ({@link Moment}), which its immutable columns and the kind of change determine; only a read shows it as
 * it is now. So a replay renders the bytes of the original, however the transfer changed since.
 */
@RegisterForReflection
@Schema(name = "Transfer", additionalProperties = Schema.False.class)
public record TransferView(
        @Schema(type = SchemaType.STRING, format = "uuid", example = "c01d5e7f-9a1b-4c3d-8e5f-7a9b1c3d5e7f") UUID id,
        @Schema(type = SchemaType.STRING, format = "uuid", example = "3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01") UUID debitAccountId,
        @Schema(type = SchemaType.STRING, format = "uuid", example = "77ab2c4d-6e8f-4a1b-9c3d-5e7f9a1b3c5d") UUID creditAccountId,
        @Schema(description = "Minor units (cents): the amount asked for (a hold's, even when partly posted)",
                minimum = "1", example = "1250") long amount,
        @Schema(example = "EUR", pattern = "^[A-Z]{3}$") String currency,
        @Schema(nullable = true, example = "order-8812") String reference,
        @Schema(enumeration = {"pending", "posted", "voided", "expired"}, example = "pending",
                description = "pending: a live hold; posted: the money moved; voided or expired: a hold released") String status,
        @Schema(description = "What moved (0 for a hold not posted)", minimum = "0", example = "0") long postedAmount,
        @Schema(description = "What reversals gave back so far", minimum = "0", example = "0") long reversedAmount,
        // a plain string schema: a nullable reference to the UUID or Instant schema would not admit null
        @Schema(implementation = String.class, format = "uuid", nullable = true,
                description = "The transfer this one reverses; null for any other") UUID reversalOf,
        @Schema(implementation = String.class, format = "date-time", nullable = true, example = "2026-11-21T10:10:01Z",
                description = "When the hold expires (or expired); null unless the transfer is or was a hold") Instant expiresAt,
        @Schema(type = SchemaType.STRING, format = "date-time", example = "2026-11-21T10:00:01Z") Instant createdAt) {

    public static final String PENDING = "pending";
    public static final String POSTED = "posted";
    public static final String VOIDED = "voided";
    public static final String EXPIRED = "expired";

    /** The moment a transfer is shown at. */
    public enum Moment {
        /** As created: a hold pending, any other posted in full. */
        CREATED,
        /** As its hold was posted: {@code postedAmount} what moved. */
        POSTED,
        /** As its hold was voided. */
        VOIDED,
        /** As its hold expired. */
        EXPIRED,
        /** As it is now: the row's status (a pending hold past its expiry is expired), posted and reversed amounts. */
        NOW
    }

    /**
     * The transfer of a row with the columns the transfer functions name ({@code transfer_id},
     * {@code debit_account_id}, {@code credit_account_id}, {@code transfer_amount}, {@code currency},
     * {@code transfer_reference}, {@code posted_amount}, {@code reversal_of}, {@code transfer_expires_at},
     * {@code transfer_created_at}; for {@link Moment#NOW} also {@code status} and {@code reversed_amount}), at
     * {@code moment}.
     */
    public static TransferView of(Row row, Moment moment) {
        long amount = row.getLong("transfer_amount");
        OffsetDateTime expiresAt = row.getOffsetDateTime("transfer_expires_at");
        boolean hold = expiresAt != null;
        String status;
        long posted;
        long reversed = 0;
        switch (moment) {
            case CREATED -> {
                status = hold ? PENDING : POSTED;
                posted = hold ? 0 : amount;
            }
            case POSTED -> {
                status = POSTED;
                posted = row.getLong("posted_amount");
            }
            case VOIDED -> {
                status = VOIDED;
                posted = 0;
            }
            case EXPIRED -> {
                status = EXPIRED;
                posted = 0;
            }
            default -> {
                status = row.getString("status");
                posted = row.getLong("posted_amount");
                reversed = row.getLong("reversed_amount");
            }
        }
        return new TransferView(row.getUUID("transfer_id"), row.getUUID("debit_account_id"), row.getUUID("credit_account_id"),
                amount, row.getString("currency"), row.getString("transfer_reference"), status, posted, reversed,
                row.getUUID("reversal_of"), hold ? expiresAt.toInstant() : null,
                row.getOffsetDateTime("transfer_created_at").toInstant());
    }
}
