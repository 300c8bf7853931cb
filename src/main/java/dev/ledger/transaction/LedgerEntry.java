package dev.ledger.transaction;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;
import java.util.UUID;

/** An applied debit or credit, of its own or a transfer's leg. Immutable once written. */
@Entity
@Table(name = "ledger_entries")
public class LedgerEntry extends PanacheEntityBase {
    @Id
    public UUID id;

    @Column(name = "account_id")
    public UUID accountId;

    @Column(columnDefinition = "text")
    public String type;

    public long amount;

    public long sequence;

    public String reference;

    @Column(name = "balance_after")
    public long balanceAfter;

    @Column(name = "created_at")
    public Instant createdAt;

    /** The transfer this entry is a leg of; null for a debit or credit of its own. */
    @Column(name = "transfer_id")
    public UUID transferId;
}
