package dev.ledger.account;

import dev.ledger.idempotency.DurableRecord;
import io.quarkus.hibernate.reactive.panache.PanacheRepositoryBase;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import dev.ledger.dependency.Postgres;
import dev.ledger.tracing.TraceParent;

import java.util.Arrays;
import java.util.UUID;

/** Queries on accounts: Panache for reads, one call of {@code ledger_open_account_checked_with_holds} for the open. */
@ApplicationScoped
public class AccountRepository implements PanacheRepositoryBase<Account, UUID> {
    private static final String OPEN = "SELECT * FROM ledger_open_account_checked_with_holds($1, $2, $3, $4, $5, $6, $7, $8, $9)";

    private final Postgres postgres;
    private final AccountReads reads;

    public AccountRepository(Postgres postgres, AccountReads reads) {
        this.postgres = postgres;
        this.reads = reads;
    }

    /** The account if it exists and belongs to {@code owner}, else null. */
    public Uni<Account> findOwned(UUID id, String owner) {
        return postgres.bounded(() -> find("id = ?1 and owner = ?2", id, owner).firstResult());
    }

    /**
     * The same as {@link #findOwned} for a request that reads nothing else: by id in a stateless
     * session, together with the other reads of its event-loop turn ({@link AccountReads}).
     */
    public Uni<Account> readOwned(UUID id, String owner) {
        return postgres.bounded(() -> reads.read(id))
                .map(account -> account != null && account.owner.equals(owner) ? account : null);
    }

    /** Opens the account under the idempotency record (which keeps the request's path; writing its event, with the current trace, for each of {@code eventDestinations}, the brokers switched on), or returns what the record already holds. */
    // Bounded, never retried: a write that timed out may have committed. The key is then released
    // and the retry finds the durable record if the commit landed after all.
    public Uni<Row> open(DurableRecord record, UUID id, String currency, String[] eventDestinations) {
        Tuple args = Tuple.tuple(Arrays.asList(record.client(), Buffer.buffer(record.keyHash()), Buffer.buffer(record.fingerprint()),
                record.expiresAt(), id, currency, eventDestinations, TraceParent.current(), record.path()));
        return postgres.query(OPEN, args)
                .map(rows -> rows.iterator().next());
    }
}
