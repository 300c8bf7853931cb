package dev.ledger.database;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Deadline;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * Bounds every Postgres call by {@code ledger.database.timeout} ({@link Deadline}, timed on the
 * caller's event loop). No retry: a write that timed out may still commit, and the idempotency
 * layer then finds its record on the retry.
 */
@ApplicationScoped
public class DatabaseGuard {
    private final Duration timeout;

    public DatabaseGuard(LedgerConfig config) {
        this.timeout = config.database().timeout();
    }

    /** The call, failing with a TimeoutException when it takes longer than the bound. */
    public <T> Uni<T> bounded(Supplier<Uni<T>> call) {
        return Deadline.within(timeout, "Postgres", call);
    }
}
