package dev.ledger.transfer;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.BatchedDelete;
import dev.ledger.dependency.Postgres;
import dev.ledger.outbox.Outbox;
import dev.ledger.shard.Shards;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Releases holds past their expiry in {@link BatchedDelete bounded batches}, each one statement
 * ({@code ledger_expire_holds} in {@code V7__transfers.sql}): the hold becomes {@code expired}, its amount
 * leaves both accounts' pending amounts, and each account gets its {@code transfer.expired} event, in one
 * transaction. A hold is expired from its {@code expiresAt} whatever this job does (every statement decides
 * by time); the job makes the release and its events follow. Every instance runs it, on every shard: a batch takes
 * the holds no other batch holds ({@code SKIP LOCKED}), then their accounts in id order, as every statement does.
 *
 * <p>In /q/metrics: {@code ledger_transfers_expired_total} (holds this instance released),
 * {@code ledger_transfers_expiry_lag_seconds} (after its last run: how long ago the oldest hold still
 * unreleased expired; 0 when none waits); each tagged {@code shard} when there are several.
 */
@ApplicationScoped
public class HoldExpiry {
    private static final Logger LOG = Logger.getLogger(HoldExpiry.class);
    private static final String RELEASE = "SELECT * FROM ledger_expire_holds($1, $2)";

    private final Postgres postgres;
    private final Outbox outbox;
    private final Shards shards;
    private final LedgerConfig.Transfers.Expiry settings;
    /** Each shard's meters, by shard name. */
    private final Map<String, ShardMeters> meters = new LinkedHashMap<>();

    /** One shard's meters: holds released, and milliseconds of lag as of its last batch. */
    private record ShardMeters(Counter released, AtomicLong lagMillis) {
    }

    public HoldExpiry(Postgres postgres, Outbox outbox, Shards shards, LedgerConfig config, MeterRegistry registry) {
        this.postgres = postgres;
        this.outbox = outbox;
        this.shards = shards;
        this.settings = config.transfers().expiry();
        for (String shard : shards.all().keySet()) {
            Tags tags = shards.tags(shard);
            AtomicLong lagMillis = new AtomicLong();
            Counter released = Counter.builder("ledger.transfers.expired").tags(tags)
                    .description("Holds past their expiry released by this instance's expiry job").register(registry);
            Gauge.builder("ledger.transfers.expiry.lag", lagMillis, millis -> millis.get() / 1000.0).tags(tags).baseUnit("seconds")
                    .description("After the expiry job's last run: how long ago the oldest hold it left unreleased expired (0: none)")
                    .register(registry);
            meters.put(shard, new ShardMeters(released, lagMillis));
        }
    }

    @Scheduled(every = "${ledger.transfers.expiry.every}", delayed = "${ledger.transfers.expiry.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return shards.each((shard, pool) -> BatchedDelete.logged(release(shard, pool, settings.batchSize(), settings.maxBatches()),
                LOG, "Released", "Release", "expired holds" + shards.where(shard)));
    }

    /** Releases batches of up to {@code batchSize} expired holds of one shard until one comes back short, at most {@code maxBatches}. */
    private Uni<BatchedDelete.Result> release(String shard, Pool pool, int batchSize, int maxBatches) {
        return BatchedDelete.run(() -> batch(shard, pool, batchSize), batchSize, maxBatches);
    }

    private Uni<Integer> batch(String shard, Pool pool, int batchSize) {
        ShardMeters shardMeters = meters.get(shard);
        Counter released = shardMeters.released();
        AtomicLong lagMillis = shardMeters.lagMillis();
        return postgres.query(pool, RELEASE, Tuple.of(batchSize, outbox.destinations()))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    int count = row.getInteger("released");
                    OffsetDateTime oldest = row.getOffsetDateTime("oldest_left");
                    OffsetDateTime now = row.getOffsetDateTime("checked_at");
                    lagMillis.set(oldest == null ? 0 : java.time.Duration.between(oldest, now).toMillis());
                    if (count > 0) {
                        released.increment(count);
                        outbox.writtenOn(shard);
                    }
                    return count;
                });
    }
}
