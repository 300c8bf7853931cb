package dev.ledger.transaction;

import dev.ledger.idempotency.RecordedSuccess;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.UUID;

/**
 * The answer an {@code APPLIED} record stands for, as the key's lookup shows it: 201,
 * {@code Location: /accounts/{id}/transactions/{txId}}, the account read from the entry (the record's path is
 * as the client spelled it, and older records have none).
 */
@ApplicationScoped
public class TransactionAppliedAnswer implements RecordedSuccess {
    private final TransactionRepository transactions;

    public TransactionAppliedAnswer(TransactionRepository transactions) {
        this.transactions = transactions;
    }

    @Override
    public String outcome() {
        return "APPLIED";
    }

    @Override
    public int status() {
        return 201;
    }

    @Override
    public Uni<String> location(String client, UUID entryId) {
        return transactions.accountOf(client, entryId).map(account -> account == null ? null : TransactionService.location(account, entryId));
    }
}
