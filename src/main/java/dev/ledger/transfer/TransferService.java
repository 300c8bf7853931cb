package dev.ledger.transfer;

import dev.ledger.account.AccountService;
import dev.ledger.idempotency.DurableOutcome;
import dev.ledger.idempotency.DurableRecord;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.ResponseRecorder;
import dev.ledger.outbox.Outbox;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.UUID;

/**
 * Transfers, holds and reversals. Every rule (both accounts locked in one order, {@code available}, the
 * sequences, a hold's state and expiry) is decided by the one statement of each request in PostgreSQL
 * ({@code V7__transfers.sql}); this class turns its outcome row into the answer that is sent and recorded.
 * The outcome names the moment the answer shows the transfer at ({@link TransferView.Moment}), so a replay
 * renders the original's bytes however the transfer changed since.
 */
@ApplicationScoped
public class TransferService {
    private final TransferRepository transfers;
    private final ResponseRecorder recorder;
    private final Outbox outbox;

    public TransferService(TransferRepository transfers, ResponseRecorder recorder, Outbox outbox) {
        this.transfers = transfers;
        this.recorder = recorder;
        this.outbox = outbox;
    }

    /** Creates a transfer or a hold in one transaction with its idempotency record and, while events are on, its events. */
    public Uni<DurableOutcome> create(DurableRecord record, NewTransfer transfer) {
        return answered(record, transfers.create(record, UUID.randomUUID(), transfer.fields(), outbox.destinations()),
                row -> render(row, transfer.fields().amount(), "Transfer"));
    }

    /** Posts, voids or reverses a transfer, likewise; a change that names no transfer (not a UUID) finds none. */
    public Uni<DurableOutcome> change(DurableRecord record, TransferChange change) {
        String[] destinations = outbox.destinations();
        return switch (change.kind()) {
            case POST -> {
                PostTransferRequest post = (PostTransferRequest) change.fields();
                yield answered(record, transfers.post(record, change.transferId(), post, destinations),
                        row -> render(row, post.amount(), "Post"));
            }
            case VOID -> answered(record, transfers.voidHold(record, change.transferId(), destinations), row -> render(row, null, "Void"));
            case REVERSE -> {
                ReverseTransferRequest reversal = (ReverseTransferRequest) change.fields();
                yield answered(record, transfers.reverse(record, change.transferId(), UUID.randomUUID(), reversal, destinations),
                        row -> render(row, reversal.amount(), "Reversal"));
            }
        };
    }

    private Uni<DurableOutcome> answered(DurableRecord record, Uni<Row> statement, java.util.function.Function<Row, RecordedResponse> render) {
        return statement
                .invoke(row -> {
                    // a refusal may have written events too: a hold found expired is released by the statement that found it
                    if (!row.getBoolean("replayed")) {
                        outbox.written(record.client());
                    }
                })
                .map(row -> DurableOutcome.of(row, render));
    }

    /**
     * The answer of an outcome row; for a replay the row holds the stored data, so the bytes are the original's.
     * {@code asked}: the amount the request named (null: its default), {@code what} the request, for details.
     */
    private RecordedResponse render(Row row, Long asked, String what) {
        String outcome = row.getString("outcome");
        return switch (outcome) {
            case "TRANSFER_CREATED" -> {
                TransferView view = TransferView.of(row, TransferView.Moment.CREATED);
                yield recorder.created(view, NewTransfer.PATH + "/" + view.id());
            }
            case "TRANSFER_POSTED" -> recorder.ok(TransferView.of(row, TransferView.Moment.POSTED));
            case "TRANSFER_VOIDED" -> recorder.ok(TransferView.of(row, TransferView.Moment.VOIDED));
            case "ACCOUNT_NOT_FOUND" -> recorder.problem(AccountService.notFound().problem()
                    .with("accountId", row.getUUID("account_id")));
            case "CURRENCY_MISMATCH" -> recorder.problem(new Problem(ProblemType.CURRENCY_MISMATCH,
                    "The two accounts hold different currencies"));
            case "STALE_SEQUENCE" -> {
                long last = row.getLong("last_sequence");
                UUID account = row.getUUID("account_id");
                yield recorder.problem(new Problem(ProblemType.STALE_SEQUENCE, last == Long.MAX_VALUE
                        ? "Account " + account + " has taken its last sequence, " + last
                        : "The leg in account " + account + " needs a sequence greater than its last sequence " + last)
                        .with("lastSequence", last).with("accountId", account));
            }
            case "INSUFFICIENT_FUNDS" -> {
                long balance = row.getLong("balance");
                long available = row.getLong("available");
                yield recorder.problem(new Problem(ProblemType.INSUFFICIENT_FUNDS, what + (asked == null ? "" : " of " + asked)
                        + " exceeds the available balance " + available + " of account " + row.getUUID("account_id")
                        + " (balance " + balance + ")")
                        .with("balance", balance).with("available", available));
            }
            case "BALANCE_LIMIT_EXCEEDED" -> {
                long balance = row.getLong("balance");
                yield recorder.problem(new Problem(ProblemType.BALANCE_LIMIT_EXCEEDED, what + (asked == null ? "" : " of " + asked)
                        + " would take the balance " + balance + " of account " + row.getUUID("account_id")
                        + ", with its pending credits, past the largest balance " + Long.MAX_VALUE)
                        .with("balance", balance));
            }
            case "TRANSFER_NOT_FOUND" -> recorder.problem(notFound().problem());
            case "TRANSFER_ALREADY_POSTED" -> recorder.problem(new Problem(ProblemType.TRANSFER_ALREADY_POSTED,
                    "The hold was posted already"));
            case "TRANSFER_ALREADY_VOIDED" -> recorder.problem(new Problem(ProblemType.TRANSFER_ALREADY_VOIDED,
                    "The hold was voided already"));
            case "TRANSFER_EXPIRED" -> recorder.problem(new Problem(ProblemType.TRANSFER_EXPIRED,
                    "The hold expired and was released"));
            case "TRANSFER_NOT_PENDING" -> recorder.problem(new Problem(ProblemType.TRANSFER_NOT_PENDING,
                    "The transfer was posted when it was made: there is no hold to settle"));
            case "TRANSFER_NOT_POSTED" -> recorder.problem(new Problem(ProblemType.TRANSFER_NOT_POSTED,
                    "Only a posted transfer can be reversed; this one is a hold, pending, voided or expired"));
            case "AMOUNT_EXCEEDS_PENDING" -> {
                long pending = row.getLong("amount_left");
                yield recorder.problem(new Problem(ProblemType.AMOUNT_EXCEEDS_PENDING,
                        "Post of " + asked + " exceeds the hold's pending amount " + pending)
                        .with("pendingAmount", pending));
            }
            case "REVERSAL_EXCEEDS_TRANSFER" -> {
                long left = row.getLong("amount_left");
                yield recorder.problem(new Problem(ProblemType.REVERSAL_EXCEEDS_TRANSFER, asked == null || left == 0
                        ? "Nothing is left to reverse: the transfer was reversed in full"
                        : "Reversal of " + asked + " exceeds what is left to reverse, " + left)
                        .with("reversibleAmount", left));
            }
            default -> throw new IllegalStateException("Unknown outcome " + outcome);
        };
    }

    /** The transfer as it is now, if it is the caller's. */
    public Uni<TransferView> find(UUID id, String owner) {
        return transfers.find(id, owner)
                .onItem().ifNull().failWith(TransferService::notFound)
                .map(row -> TransferView.of(row, TransferView.Moment.NOW));
    }

    public static ProblemException notFound() {
        return new ProblemException(ProblemType.TRANSFER_NOT_FOUND, "No such transfer");
    }
}
