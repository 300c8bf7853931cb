package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.BatchedDelete;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import dev.ledger.dependency.Postgres;
import dev.ledger.shard.Shards;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.Map;

/**
 * Removes expired idempotency records in {@link BatchedDelete bounded batches} (oldest first,
 * skipping rows another purger holds), on every shard. A purged key is free again: a request with it executes afresh.
 * In /q/metrics: {@code ledger_idempotency_records_purged_total}, the records this instance removed, tagged {@code shard}
 * when there are several.
 */
@Startup // its counters exist from the start, at 0
@ApplicationScoped
public class ExpiredRecordPurge {
    private static final Logger LOG = Logger.getLogger(ExpiredRecordPurge.class);
    private static final String DELETE_BATCH = """
            DELETE FROM idempotency_records WHERE ctid = ANY (ARRAY (
                SELECT ctid FROM idempotency_records WHERE expires_at < now()
                ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))""";

    private final Postgres guard;
    private final Shards shards;
    private final LedgerConfig config;
    /** Records removed, by shard name. */
    private final Map<String, Counter> purged;

    public ExpiredRecordPurge(Postgres guard, Shards shards, LedgerConfig config, MeterRegistry registry) {
        this.guard = guard;
        this.shards = shards;
        this.config = config;
        this.purged = shards.counters(registry, "ledger.idempotency.records.purged",
                "Expired idempotency records removed by this instance's purge");
    }

    @Scheduled(every = "${ledger.idempotency.purge.every}", delayed = "${ledger.idempotency.purge.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        LedgerConfig.Purge purge = config.idempotency().purge();
        return shards.each((shard, pool) -> BatchedDelete.logged(purge(shard, pool, purge.batchSize(), purge.maxBatches()), LOG,
                "expired idempotency records" + shards.where(shard)));
    }

    /**
     * Deletes batches of up to {@code batchSize} expired records until one comes back short, at most {@code maxBatches},
     * on every shard one after the other; answers the sum.
     */
    public Uni<BatchedDelete.Result> purge(int batchSize, int maxBatches) {
        return BatchedDelete.onEvery(shards.all().entrySet(), shard -> purge(shard.getKey(), shard.getValue(), batchSize, maxBatches));
    }

    private Uni<BatchedDelete.Result> purge(String shard, Pool pool, int batchSize, int maxBatches) {
        Counter removed = purged.get(shard);
        return BatchedDelete.run(() -> guard.query(pool, DELETE_BATCH, Tuple.of(batchSize)).map(rows -> BatchedDelete.counted(rows.rowCount(), removed)),
                batchSize, maxBatches);
    }
}
