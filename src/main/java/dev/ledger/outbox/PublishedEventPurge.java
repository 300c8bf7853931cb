package dev.ledger.outbox;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.BatchedDelete;
import dev.ledger.shard.Shards;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Map;

/**
 * Removes events published longer than {@code ledger.events.retention} ago, in {@link BatchedDelete
 * bounded batches}, on every shard. Unpublished events are never removed, however old. In /q/metrics:
 * {@code ledger_events_purged_total}, the events this instance removed, tagged {@code shard} when there are several.
 */
@Startup // its counters exist from the start, at 0
@ApplicationScoped
public class PublishedEventPurge {
    private static final Logger LOG = Logger.getLogger(PublishedEventPurge.class);

    private final OutboxRepository outbox;
    private final Shards shards;
    private final LedgerConfig config;
    /** Events removed, by shard name. */
    private final Map<String, Counter> purged;

    public PublishedEventPurge(OutboxRepository outbox, Shards shards, LedgerConfig config, MeterRegistry registry) {
        this.outbox = outbox;
        this.shards = shards;
        this.config = config;
        this.purged = shards.counters(registry, "ledger.events.purged", "Published events past their retention removed by this instance's purge");
    }

    @Scheduled(every = "${ledger.events.purge.every}", delayed = "${ledger.events.purge.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        LedgerConfig.Purge purge = config.events().purge();
        return shards.each((shard, pool) -> BatchedDelete.logged(purge(shard, pool, purge.batchSize(), purge.maxBatches(),
                config.events().retention()), LOG, "published events past their retention" + shards.where(shard)));
    }

    /**
     * Deletes batches of up to {@code batchSize} events published over {@code retention} ago, at most {@code maxBatches},
     * on every shard one after the other; answers the sum.
     */
    public Uni<BatchedDelete.Result> purge(int batchSize, int maxBatches, Duration retention) {
        return BatchedDelete.onEvery(shards.all().entrySet(), shard -> purge(shard.getKey(), shard.getValue(), batchSize, maxBatches, retention));
    }

    private Uni<BatchedDelete.Result> purge(String shard, Pool pool, int batchSize, int maxBatches, Duration retention) {
        Counter removed = purged.get(shard);
        return BatchedDelete.run(() -> outbox.purgeBatch(pool, batchSize, retention).map(rows -> BatchedDelete.counted(rows, removed)),
                batchSize, maxBatches);
    }
}
