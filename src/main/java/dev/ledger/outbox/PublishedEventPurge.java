package dev.ledger.outbox;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.BatchedDelete;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;

/**
 * Removes events published longer than {@code ledger.events.retention} ago, in {@link BatchedDelete
 * bounded batches}. Unpublished events are never removed, however old.
 */
@ApplicationScoped
public class PublishedEventPurge {
    private static final Logger LOG = Logger.getLogger(PublishedEventPurge.class);

    private final OutboxRepository outbox;
    private final LedgerConfig config;

    public PublishedEventPurge(OutboxRepository outbox, LedgerConfig config) {
        this.outbox = outbox;
        this.config = config;
    }

    @Scheduled(every = "${ledger.events.purge.every}", delayed = "${ledger.events.purge.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        LedgerConfig.Purge purge = config.events().purge();
        return BatchedDelete.logged(purge(purge.batchSize(), purge.maxBatches(), config.events().retention()), LOG,
                "published events past their retention");
    }

    /** Deletes batches of up to {@code batchSize} events published over {@code retention} ago, at most {@code maxBatches}. */
    public Uni<BatchedDelete.Result> purge(int batchSize, int maxBatches, Duration retention) {
        return BatchedDelete.run(() -> outbox.purgeBatch(batchSize, retention), batchSize, maxBatches);
    }
}
