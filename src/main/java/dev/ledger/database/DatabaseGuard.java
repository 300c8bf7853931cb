package dev.ledger.database;

import dev.ledger.config.LedgerConfig;
import io.smallrye.faulttolerance.api.Guard;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.temporal.ChronoUnit;
import java.util.function.Supplier;

/**
 * Bounds every Postgres call by {@code ledger.database.timeout}: a SmallRye Fault Tolerance guard
 * built once (cheaper per call than interceptor annotations). No retry: a write that timed out may
 * still commit, and the idempotency layer then finds its record on the retry.
 */
@ApplicationScoped
public class DatabaseGuard {
    private final Guard guard;

    public DatabaseGuard(LedgerConfig config) {
        this.guard = Guard.create()
                .withTimeout().duration(config.database().timeout().toMillis(), ChronoUnit.MILLIS).done()
                .withThreadOffload(false)
                .build();
    }

    /** The call, failing with a TimeoutException when it takes longer than the bound. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <T> Uni<T> bounded(Supplier<Uni<T>> call) {
        // The guard needs the call's type; Uni is the same for every T.
        return guard.get((Supplier<Uni>) (Supplier) call, Uni.class);
    }
}
