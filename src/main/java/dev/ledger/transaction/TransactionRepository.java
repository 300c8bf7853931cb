package dev.ledger.transaction;

import dev.ledger.idempotency.DurableRecord;
import io.quarkus.hibernate.reactive.panache.PanacheRepositoryBase;
import io.quarkus.panache.common.Sort;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import dev.ledger.dependency.Postgres;
import dev.ledger.tracing.TraceParent;

import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * Queries on ledger entries: Panache for reads, one call of {@code ledger_post_transaction_checked_with_holds} for a
 * POST; each bounded by {@link Postgres}.
 */
@ApplicationScoped
public class TransactionRepository implements PanacheRepositoryBase<LedgerEntry, UUID> {
    private static final String POST =
            "SELECT * FROM ledger_post_transaction_checked_with_holds($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";

    private static final String ACCOUNT_OF = "SELECT account_id FROM ledger_entries WHERE id = $1";

    private final Postgres postgres;

    public TransactionRepository(Postgres postgres) {
        this.postgres = postgres;
    }

    /** Up to {@code limit} entries with sequence above {@code after}, ascending. */
    public Uni<List<LedgerEntry>> page(UUID accountId, long after, int limit) {
        return postgres.bounded(() -> find("accountId = ?1 and sequence > ?2", Sort.by("sequence"), accountId, after)
                .range(0, limit - 1).list());
    }

    public Uni<LedgerEntry> findInAccount(UUID accountId, UUID id) {
        return postgres.bounded(() -> find("id = ?1 and accountId = ?2", id, accountId).firstResult());
    }

    /** The account of the ledger entry {@code id}; null when there is none. */
    public Uni<UUID> accountOf(UUID id) {
        return postgres.query(ACCOUNT_OF, Tuple.of(id))
                .map(rows -> rows.size() == 0 ? null : rows.iterator().next().getUUID(0));
    }

    /**
     * Inserts the idempotency record (with the request's path), applies the sequence-checked update and the ledger entry (and an
     * outbox event, with the current trace, for each of {@code eventDestinations}), all in one statement; or returns what the
     * record already holds. A null account id finds no account.
     */
    // Bounded, never retried: a write that timed out may have committed. The key is then released
    // and the retry finds the durable record if the commit landed after all.
    public Uni<Row> post(DurableRecord record, UUID accountId, UUID entryId, PostTransactionRequest request, String[] eventDestinations) {
        Tuple args = Tuple.from(Arrays.asList(record.client(), Buffer.buffer(record.keyHash()),
                Buffer.buffer(record.fingerprint()), record.expiresAt(), accountId, entryId,
                request.type().name(), request.amount(), request.sequence(), request.reference(), eventDestinations,
                TraceParent.current(), record.path()));
        return postgres.query(POST, args)
                .map(rows -> rows.iterator().next());
    }
}
