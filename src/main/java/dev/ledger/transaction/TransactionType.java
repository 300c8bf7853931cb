package dev.ledger.transaction;

public enum TransactionType {
    DEBIT, CREDIT
}
