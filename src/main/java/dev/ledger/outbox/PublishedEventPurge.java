package dev.ledger.outbox;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.BatchedDelete;
import dev.ledger.shard.Shards;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;

/**
 * Removes events published longer than {@code ledger.events.retention} ago, in {@link BatchedDelete
 * bounded batches}, on every shard. Unpublished events are never removed, however old.
 */
@ApplicationScoped
public class PublishedEventPurge {
    private static final Logger LOG = Logger.getLogger(PublishedEventPurge.class);

    private final OutboxRepository outbox;
    private final Shards shards;
    private final LedgerConfig config;

    public PublishedEventPurge(OutboxRepository outbox, Shards shards, LedgerConfig config) {
        this.outbox = outbox;
        this.shards = shards;
        this.config = config;
    }

    @Scheduled(every = "${ledger.events.purge.every}", delayed = "${ledger.events.purge.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        LedgerConfig.Purge purge = config.events().purge();
        return shards.each((shard, pool) -> BatchedDelete.logged(purge(pool, purge.batchSize(), purge.maxBatches(),
                config.events().retention()), LOG, "published events past their retention" + shards.where(shard)));
    }

    /**
     * Deletes batches of up to {@code batchSize} events published over {@code retention} ago, at most {@code maxBatches},
     * on every shard one after the other; answers the sum.
     */
    public Uni<BatchedDelete.Result> purge(int batchSize, int maxBatches, Duration retention) {
        return BatchedDelete.onEvery(shards.all().values(), pool -> purge(pool, batchSize, maxBatches, retention));
    }

    private Uni<BatchedDelete.Result> purge(Pool shard, int batchSize, int maxBatches, Duration retention) {
        return BatchedDelete.run(() -> outbox.purgeBatch(shard, batchSize, retention), batchSize, maxBatches);
    }
}
