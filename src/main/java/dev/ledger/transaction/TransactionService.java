package dev.ledger.transaction;

import dev.ledger.account.AccountRepository;
import dev.ledger.account.AccountService;
import dev.ledger.outbox.Outbox;
import dev.ledger.idempotency.DurableOutcome;
import dev.ledger.idempotency.DurableRecord;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.ResponseRecorder;
import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.UUID;

/**
 * Debits and credits. The rules (sequence check, no debit past {@code available}) are enforced by the
 * one statement {@code ledger_post_transaction_checked_with_holds} (V11); this class turns its outcome into the answer
 * that is sent and recorded.
 */
@ApplicationScoped
public class TransactionService {
    private final TransactionRepository transactions;
    private final AccountRepository accounts;
    private final ResponseRecorder recorder;
    private final Outbox outbox;

    public TransactionService(TransactionRepository transactions, AccountRepository accounts, ResponseRecorder recorder,
                              Outbox outbox) {
        this.transactions = transactions;
        this.accounts = accounts;
        this.recorder = recorder;
        this.outbox = outbox;
    }

    /**
     * Posts in one transaction with its idempotency record and, when applied while events are on, its
     * event. A payment that names no account (not a UUID) finds none.
     */
    public Uni<DurableOutcome> post(DurableRecord record, Payment payment) {
        PostTransactionRequest request = payment.fields();
        return transactions.post(record, payment.accountId(), UUID.randomUUID(), request, outbox.destinations())
                .invoke(row -> {
                    if (!row.getBoolean("replayed") && "APPLIED".equals(row.getString("outcome"))) {
                        outbox.written(record.client());
                    }
                })
                .map(row -> DurableOutcome.of(row, answer -> render(answer, request)));
    }

    /** The answer of an outcome row; for a replay the row holds the stored data, so the bytes are the original's. */
    private RecordedResponse render(Row row, PostTransactionRequest request) {
        String outcome = row.getString("outcome");
        switch (outcome) {
            case "APPLIED":
                TransactionView view = TransactionView.of(row);
                return recorder.created(view, location(view.accountId(), view.id()));
            case "ACCOUNT_NOT_FOUND":
                return recorder.problem(AccountService.notFound().problem());
            case "STALE_SEQUENCE":
                long last = row.getLong("last_sequence");
                return recorder.problem(new Problem(ProblemType.STALE_SEQUENCE,
                        "Sequence " + request.sequence() + " is not greater than the account's last sequence " + last)
                        .with("lastSequence", last));
            case "INSUFFICIENT_FUNDS":
                long balance = row.getLong("balance");
                Long available = row.getLong("available");
                // a refusal recorded before there were holds has no available: it replays as it was answered
                return recorder.problem(available == null
                        ? new Problem(ProblemType.INSUFFICIENT_FUNDS, "Debit of " + request.amount() + " exceeds balance " + balance)
                                .with("balance", balance)
                        : new Problem(ProblemType.INSUFFICIENT_FUNDS, "Debit of " + request.amount()
                                + " exceeds the available balance " + available + " (balance " + balance + ")")
                                .with("balance", balance).with("available", available));
            case "BALANCE_LIMIT_EXCEEDED":
                long current = row.getLong("balance");
                return recorder.problem(new Problem(ProblemType.BALANCE_LIMIT_EXCEEDED,
                        "Credit of " + request.amount() + " would take balance " + current
                                + " past the largest balance " + Long.MAX_VALUE)
                        .with("balance", current));
            default:
                throw new IllegalStateException("Unknown outcome " + outcome);
        }
    }

    /** An applied transaction's {@code Location}. */
    static String location(UUID accountId, UUID id) {
        return "/accounts/" + accountId + "/transactions/" + id;
    }

    public Uni<TransactionPage> list(UUID accountId, String owner, long after, int limit) {
        return accounts.withSession(owner, () -> accounts.findOwned(accountId, owner)
                .onItem().ifNull().failWith(AccountService::notFound)
                .chain(account -> transactions.page(owner, accountId, after, limit + 1)))
                .map(entries -> {
                    boolean more = entries.size() > limit;
                    List<TransactionView> items = entries.stream().limit(limit).map(TransactionView::of).toList();
                    Long next = more ? items.get(items.size() - 1).sequence() : null;
                    return new TransactionPage(items, next);
                });
    }

    public Uni<TransactionView> find(UUID accountId, String owner, UUID transactionId) {
        return accounts.withSession(owner, () -> accounts.findOwned(accountId, owner)
                .onItem().ifNull().failWith(AccountService::notFound)
                .chain(account -> transactionId == null
                        ? Uni.createFrom().<LedgerEntry>nullItem()
                        : transactions.findInAccount(owner, accountId, transactionId)))
                .onItem().ifNull().failWith(TransactionService::notFound)
                .map(TransactionView::of);
    }

    static ProblemException notFound() {
        return new ProblemException(ProblemType.TRANSACTION_NOT_FOUND, "No such transaction in this account");
    }
}
