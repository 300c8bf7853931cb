package dev.ledger.account;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;
import java.util.UUID;

/** An account row. Balances change only through the sequence-checked update in the migrations. */
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
}
