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
import dev.ledger.shard.Shards;
import dev.ledger.tracing.TraceParent;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * Queries on ledger entries: Panache for reads, one call of {@code ledger_post_transaction_checked_with_holds} for a
 * POST; each bounded by {@link Postgres}, on the client's shard ({@link Shards}). A client on the default shard reads
 * through Hibernate Reactive's session, one on another shard through the same columns in SQL.
 */
@ApplicationScoped
public class TransactionRepository implements PanacheRepositoryBase<LedgerEntry, UUID> {
    private static final String POST =
            "SELECT * FROM ledger_post_transaction_checked_with_holds($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";

    private static final String ACCOUNT_OF = "SELECT account_id FROM ledger_entries WHERE id = $1";

    // The reads of a client on another shard than the default, where Hibernate Reactive's session does not reach.
    private static final String ENTRY = "SELECT id, account_id, type, amount, sequence, reference, balance_after, created_at, transfer_id FROM ledger_entries";
    private static final String PAGE = ENTRY + " WHERE account_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3";
    private static final String IN_ACCOUNT = ENTRY + " WHERE id = $1 AND account_id = $2";

    private final Postgres postgres;
    private final Shards shards;

    public TransactionRepository(Postgres postgres, Shards shards) {
        this.postgres = postgres;
        this.shards = shards;
    }

    /** Up to {@code limit} entries with sequence above {@code after}, ascending, of {@code owner}'s account. */
    public Uni<List<LedgerEntry>> page(String owner, UUID accountId, long after, int limit) {
        if (!shards.onDefault(owner)) {
            return postgres.query(owner, PAGE, Tuple.of(accountId, after, limit))
                    .map(rows -> {
                        List<LedgerEntry> page = new ArrayList<>(rows.size());
                        rows.forEach(row -> page.add(entry(row)));
                        return page;
                    });
        }
        return postgres.bounded(() -> find("accountId = ?1 and sequence > ?2", Sort.by("sequence"), accountId, after)
                .range(0, limit - 1).list());
    }

    public Uni<LedgerEntry> findInAccount(String owner, UUID accountId, UUID id) {
        if (!shards.onDefault(owner)) {
            return postgres.query(owner, IN_ACCOUNT, Tuple.of(id, accountId))
                    .map(rows -> rows.size() == 0 ? null : entry(rows.iterator().next()));
        }
        return postgres.bounded(() -> find("id = ?1 and accountId = ?2", id, accountId).firstResult());
    }

    /** The account of {@code client}'s ledger entry {@code id}; null when there is none. */
    public Uni<UUID> accountOf(String client, UUID id) {
        return postgres.query(client, ACCOUNT_OF, Tuple.of(id))
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
        return postgres.query(record.client(), POST, args)
                .map(rows -> rows.iterator().next());
    }

    private static LedgerEntry entry(Row row) {
        LedgerEntry entry = new LedgerEntry();
        entry.id = row.getUUID("id");
        entry.accountId = row.getUUID("account_id");
        entry.type = row.getString("type");
        entry.amount = row.getLong("amount");
        entry.sequence = row.getLong("sequence");
        entry.reference = row.getString("reference");
        entry.balanceAfter = row.getLong("balance_after");
        entry.createdAt = row.getOffsetDateTime("created_at").toInstant();
        entry.transferId = row.getUUID("transfer_id");
        return entry;
    }
}
