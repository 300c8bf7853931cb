package dev.ledger.account;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.hibernate.annotations.Formula;

import java.time.Instant;
import java.util.UUID;

/** An account row. Balances and pending amounts change only through the ledger's functions in the migrations. */
@Entity
@Table(name = "accounts")
public class Account extends PanacheEntityBase {
    @Id
    public UUID id;

    /** The client that opened it; no other client can see it. */
    @Column(columnDefinition = "text")
    public String owner;

    @Column(columnDefinition = "char(3)")
    public String currency;

    /** Minor units (cents), never negative. */
    public long balance;

    @Column(name = "last_sequence")
    public long lastSequence;

    @Column(name = "created_at")
    public Instant createdAt;

    /**
     * The live holds' amounts this account would pay, minor units: the column less the holds past their
     * expiry that the job has not released yet (a hold expires at its time, whoever looks).
     */
    @Formula("CASE WHEN pending_debits = 0 THEN 0 ELSE ledger_live_pending_debits(id, pending_debits) END")
    public long pendingDebits;

    /** The live holds' amounts this account would receive, as {@link #pendingDebits}. */
    @Formula("CASE WHEN pending_credits = 0 THEN 0 ELSE ledger_live_pending_credits(id, pending_credits) END")
    public long pendingCredits;
}
