package dev.ledger.transfer;

import dev.ledger.dependency.Postgres;
import dev.ledger.idempotency.DurableRecord;
import dev.ledger.tracing.TraceParent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * The transfers' statements: one call of a PL/pgSQL function of {@code V7__transfers.sql} per POST (the
 * idempotency record, the accounts, the transfer, the entries and the events, in one transaction), and the
 * read of a transfer as it is now; each bounded by {@link Postgres}, on the client's shard.
 */
@ApplicationScoped
public class TransferRepository {
    private static final String CREATE = "SELECT * FROM ledger_create_transfer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
    private static final String POST = "SELECT * FROM ledger_post_transfer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
    private static final String VOID = "SELECT * FROM ledger_void_transfer($1, $2, $3, $4, $5, $6, $7, $8)";
    private static final String REVERSE = "SELECT * FROM ledger_reverse_transfer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
    private static final String FIND = "SELECT * FROM ledger_transfer_now($1, $2)";

    private final Postgres postgres;

    public TransferRepository(Postgres postgres) {
        this.postgres = postgres;
    }

    // Bounded, never retried after a timeout: a write that timed out may have committed. The key is then released
    // and the retry finds the durable record if the commit landed after all.

    public Uni<Row> create(DurableRecord record, UUID id, CreateTransferRequest request, String[] eventDestinations) {
        return call(CREATE, record, id, request.debitAccountId(), request.creditAccountId(), request.amount(),
                request.reference(), request.pending(), (int) request.timeoutSeconds(), request.debitSequence(),
                request.creditSequence(), eventDestinations);
    }

    /** A null {@code transferId} finds no transfer. */
    public Uni<Row> post(DurableRecord record, UUID transferId, PostTransferRequest request, String[] eventDestinations) {
        return call(POST, record, transferId, request.amount(), request.debitSequence(), request.creditSequence(),
                eventDestinations);
    }

    public Uni<Row> voidHold(DurableRecord record, UUID transferId, String[] eventDestinations) {
        return call(VOID, record, transferId, eventDestinations);
    }

    public Uni<Row> reverse(DurableRecord record, UUID transferId, UUID reversalId, ReverseTransferRequest request,
                            String[] eventDestinations) {
        return call(REVERSE, record, transferId, reversalId, request.amount(), request.reference(), eventDestinations);
    }

    /** The transfer as it is now, if it is {@code owner}'s; else null. */
    public Uni<Row> find(UUID id, String owner) {
        return postgres.query(owner, FIND, Tuple.of(id, owner)).map(TransferRepository::firstOrNull);
    }

    /** The record's columns (its path included), then {@code args}, then the current trace. */
    private Uni<Row> call(String sql, DurableRecord record, Object... args) {
        List<Object> values = new ArrayList<>(Arrays.asList(record.client(), Buffer.buffer(record.keyHash()),
                Buffer.buffer(record.fingerprint()), record.expiresAt(), record.path()));
        values.addAll(Arrays.asList(args));
        values.add(TraceParent.current());
        return postgres.query(record.client(), sql, Tuple.from(values)).map(rows -> rows.iterator().next());
    }

    private static Row firstOrNull(RowSet<Row> rows) {
        return rows.size() == 0 ? null : rows.iterator().next();
    }
}
