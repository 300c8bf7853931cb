package dev.ledger.transfer;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.BatchedDelete;
import dev.ledger.dependency.Postgres;
import dev.ledger.outbox.Outbox;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.OffsetDateTime;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Releases holds past their expiry in {@link BatchedDelete bounded batches}, each one statement
 * ({@code ledger_expire_holds} in {@code V7__transfers.sql}): the hold becomes {@code expired}, its amount
 * leaves both accounts' pending amounts, and each account gets its {@code transfer.expired} event, in one
 * transaction. A hold is expired from its {@code expiresAt} whatever this job does (every statement decides
 * by time); the job makes the release and its events follow. Every instance runs it: a batch takes the holds
 * no other batch holds ({@code SKIP LOCKED}), then their accounts in id order, as every statement does.
 *
 * <p>In /q/metrics: {@code ledger_transfers_expired_total} (holds this instance released),
 * {@code ledger_transfers_expiry_lag_seconds} (after its last run: how long ago the oldest hold still
 * unreleased expired; 0 when none waits).
 */
@ApplicationScoped
public class HoldExpiry {
    private static final Logger LOG = Logger.getLogger(HoldExpiry.class);
    private static final String RELEASE = "SELECT * FROM ledger_expire_holds($1, $2)";

    private final Postgres postgres;
    private final Outbox outbox;
    private final LedgerConfig.Transfers.Expiry settings;
    private final Counter released;
    /** Milliseconds, as of the last batch. */
    private final AtomicLong lagMillis = new AtomicLong();

    public HoldExpiry(Postgres postgres, Outbox outbox, LedgerConfig config, MeterRegistry registry) {
        this.postgres = postgres;
        this.outbox = outbox;
        this.settings = config.transfers().expiry();
        this.released = Counter.builder("ledger.transfers.expired")
                .description("Holds past their expiry released by this instance's expiry job").register(registry);
        Gauge.builder("ledger.transfers.expiry.lag", lagMillis, millis -> millis.get() / 1000.0).baseUnit("seconds")
                .description("After the expiry job's last run: how long ago the oldest hold it left unreleased expired (0: none)")
                .register(registry);
    }

    @Scheduled(every = "${ledger.transfers.expiry.every}", delayed = "${ledger.transfers.expiry.every}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return BatchedDelete.logged(release(settings.batchSize(), settings.maxBatches()), LOG, "Released", "Release",
                "expired holds");
    }

    /** Releases batches of up to {@code batchSize} expired holds until one comes back short, at most {@code maxBatches}. */
    public Uni<BatchedDelete.Result> release(int batchSize, int maxBatches) {
        return BatchedDelete.run(() -> batch(batchSize), batchSize, maxBatches);
    }

    private Uni<Integer> batch(int batchSize) {
        return postgres.query(RELEASE, Tuple.of(batchSize, outbox.destinations()))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    int count = row.getInteger("released");
                    OffsetDateTime oldest = row.getOffsetDateTime("oldest_left");
                    OffsetDateTime now = row.getOffsetDateTime("checked_at");
                    lagMillis.set(oldest == null ? 0 : java.time.Duration.between(oldest, now).toMillis());
                    if (count > 0) {
                        released.increment(count);
                        outbox.written();
                    }
                    return count;
                });
    }
}
