package dev.ledger.account;

import dev.ledger.idempotency.DurableRecord;
import io.quarkus.hibernate.reactive.panache.PanacheRepositoryBase;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import dev.ledger.dependency.Postgres;
import dev.ledger.shard.Shards;
import dev.ledger.tracing.TraceParent;
import io.quarkus.hibernate.reactive.panache.Panache;

import java.util.Arrays;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Queries on accounts: Panache for reads, one call of {@code ledger_open_account_checked_with_holds} for the open; each on
 * the client's shard ({@link Shards}), where a client on another shard than the default reads in SQL.
 */
@ApplicationScoped
public class AccountRepository implements PanacheRepositoryBase<Account, UUID> {
    private static final String OPEN = "SELECT * FROM ledger_open_account_checked_with_holds($1, $2, $3, $4, $5, $6, $7, $8, $9)";

    // The read of a client on another shard than the default, where Hibernate Reactive's session does not reach: the
    // entity's columns and formulas, in SQL.
    private static final String OWNED = "SELECT id, owner, currency, balance, last_sequence, created_at, "
            + "CASE WHEN pending_debits = 0 THEN 0 ELSE ledger_live_pending_debits(id, pending_debits) END AS pending_debits, "
            + "CASE WHEN pending_credits = 0 THEN 0 ELSE ledger_live_pending_credits(id, pending_credits) END AS pending_credits "
            + "FROM accounts WHERE id = $1 AND owner = $2";

    private final Postgres postgres;
    private final AccountReads reads;
    private final Shards shards;

    public AccountRepository(Postgres postgres, AccountReads reads, Shards shards) {
        this.postgres = postgres;
        this.reads = reads;
        this.shards = shards;
    }

    /**
     * {@code work}, {@code owner}'s reads, in a Hibernate Reactive session when {@code owner} is on the default shard
     * (its entities' reads need one); on another shard the reads are SQL on its pool and need none.
     */
    public <T> Uni<T> withSession(String owner, Supplier<Uni<T>> work) {
        return shards.onDefault(owner) ? Panache.withSession(work) : work.get();
    }

    /** The account if it exists and belongs to {@code owner}, else null. */
    public Uni<Account> findOwned(UUID id, String owner) {
        if (!shards.onDefault(owner)) {
            return onShard(id, owner);
        }
        return postgres.bounded(() -> find("id = ?1 and owner = ?2", id, owner).firstResult());
    }

    /**
     * The same as {@link #findOwned} for a request that reads nothing else: by id in a stateless
     * session, together with the other reads of its event-loop turn ({@link AccountReads}).
     */
    public Uni<Account> readOwned(UUID id, String owner) {
        if (!shards.onDefault(owner)) {
            return onShard(id, owner);
        }
        return postgres.bounded(() -> reads.read(id))
                .map(account -> account != null && account.owner.equals(owner) ? account : null);
    }

    /** Opens the account under the idempotency record (which keeps the request's path; writing its event, with the current trace, for each of {@code eventDestinations}, the brokers switched on), or returns what the record already holds. */
    // Bounded, never retried: a write that timed out may have committed. The key is then released
    // and the retry finds the durable record if the commit landed after all.
    public Uni<Row> open(DurableRecord record, UUID id, String currency, String[] eventDestinations) {
        Tuple args = Tuple.tuple(Arrays.asList(record.client(), Buffer.buffer(record.keyHash()), Buffer.buffer(record.fingerprint()),
                record.expiresAt(), id, currency, eventDestinations, TraceParent.current(), record.path()));
        return postgres.query(record.client(), OPEN, args)
                .map(rows -> rows.iterator().next());
    }

    private Uni<Account> onShard(UUID id, String owner) {
        return postgres.query(owner, OWNED, Tuple.of(id, owner)).map(rows -> {
            if (rows.size() == 0) {
                return null;
            }
            Row row = rows.iterator().next();
            Account account = new Account();
            account.id = row.getUUID("id");
            account.owner = row.getString("owner");
            account.currency = row.getString("currency");
            account.balance = row.getLong("balance");
            account.lastSequence = row.getLong("last_sequence");
            account.createdAt = row.getOffsetDateTime("created_at").toInstant();
            account.pendingDebits = row.getLong("pending_debits");
            account.pendingCredits = row.getLong("pending_credits");
            return account;
        });
    }
}
