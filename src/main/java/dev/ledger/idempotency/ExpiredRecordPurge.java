package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Removes expired idempotency records in bounded batches: each batch is one short DELETE of at
 * most {@code batch-size} rows (oldest first, skipping rows another purger holds), and one run
 * stops after {@code max-batches}, so the purge never holds many locks or a long transaction.
 * A purged key is free again: a request with it executes afresh.
 */
@ApplicationScoped
public class ExpiredRecordPurge {
    private static final Logger LOG = Logger.getLogger(ExpiredRecordPurge.class);
    private static final String DELETE_BATCH = """
            DELETE FROM idempotency_records WHERE ctid = ANY (ARRAY (
                SELECT ctid FROM idempotency_records WHERE expires_at < now()
                ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))""";

    private final Pool pool;
    private final LedgerConfig config;

    public ExpiredRecordPurge(Pool pool, LedgerConfig config) {
        this.pool = pool;
        this.config = config;
    }

    /** What one run did. */
    public record Result(long rows, int batches) {
    }

    @Scheduled(every = "${ledger.idempotency.purge.every}", delayed = "${ledger.idempotency.purge.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        LedgerConfig.Purge purge = config.idempotency().purge();
        return purge(purge.batchSize(), purge.maxBatches())
                .invoke(result -> {
                    if (result.rows() > 0) {
                        LOG.infof("Purged %d expired idempotency records in %d batches", result.rows(), result.batches());
                    }
                })
                .onFailure().recoverWithItem(failure -> {
                    LOG.warnf("Purge of expired idempotency records failed (%s); next run retries", failure.toString());
                    return new Result(0, 0);
                })
                .replaceWithVoid();
    }

    /** Deletes batches of up to {@code batchSize} expired records until one comes back short, at most {@code maxBatches}. */
    public Uni<Result> purge(int batchSize, int maxBatches) {
        return Multi.createBy().repeating()
                .uni(() -> pool.preparedQuery(DELETE_BATCH).execute(Tuple.of(batchSize)).map(rows -> (long) rows.rowCount()))
                .whilst(deleted -> deleted == batchSize)
                .select().first(maxBatches)
                .collect().in(() -> new long[2], (acc, deleted) -> {
                    acc[0] += deleted;
                    acc[1]++;
                })
                .map(acc -> new Result(acc[0], (int) acc[1]));
    }
}
