package dev.ledger.dependency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.shard.ShardLayout;
import dev.ledger.shard.Shards;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgException;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Bounds every Postgres call by {@code ledger.database.timeout} ({@link Deadline}, timed on the
 * caller's event loop). No retry of a statement that timed out or lost its connection: a write may
 * still commit, and the idempotency layer then finds its record on the retry. Only a statement that
 * PostgreSQL rolled back itself (a deadlock's victim, a serialization failure) runs again.
 *
 * <p>Timed per shard ({@link DependencyTimer}, tagged {@code shard} when there are several: {@link Shards#tags}), with
 * one timer of each shard made at start and found by its pool, so that a statement pays no allocation for it.
 */
@ApplicationScoped
public class Postgres {
    /** Runs again of a statement PostgreSQL rolled back itself ({@link #rolledBack}), within the one bound. */
    static final int ROLLED_BACK_RETRIES = 3;

    private final Pool pool;
    private final Shards shards;
    private final Duration timeout;
    /** The default shard's statements (Hibernate Reactive's reads too), and those of a pool not found below. */
    private final DependencyTimer statements;
    /** Each shard's timer by its pool (by identity); empty with one database, whose timer is {@link #statements}. */
    private final Map<Pool, DependencyTimer> byShard = new IdentityHashMap<>();

    @Inject
    public Postgres(Pool pool, Shards shards, LedgerConfig config, MeterRegistry registry) {
        this(pool, shards, config.database().timeout(), registry);
    }

    /** With a bound of its own and one database: the tests' way in (PostgresTest). */
    Postgres(Pool pool, Duration timeout, MeterRegistry registry) {
        this(pool, null, timeout, registry);
    }

    private Postgres(Pool pool, Shards shards, Duration timeout, MeterRegistry registry) {
        this.pool = pool;
        this.shards = shards;
        this.timeout = timeout;
        if (shards == null || !shards.several()) {
            this.statements = DependencyTimer.of(registry, "postgres", "statement");
        } else {
            shards.all().forEach((shard, on) -> byShard.put(on, DependencyTimer.of(registry, "postgres", "statement", shards.tags(shard))));
            this.statements = byShard.get(shards.all().get(ShardLayout.DEFAULT));
        }
    }

    /**
     * The call, failing with a TimeoutException when it takes longer than the bound; timed, the bound included, as
     * the default shard's (Hibernate Reactive's reads, which only that shard serves).
     */
    public <T> Uni<T> bounded(Supplier<Uni<T>> call) {
        return statements.time(() -> Deadline.within(timeout, "Postgres", call));
    }

    /** The same for a call on a connection of {@code on}, one shard's pool (a transaction's statements), timed as that shard's. */
    public <T> Uni<T> bounded(Pool on, Supplier<Uni<T>> call) {
        return timer(on).time(() -> Deadline.within(timeout, "Postgres", call));
    }

    private DependencyTimer timer(Pool on) {
        if (byShard.isEmpty()) {
            return statements;
        }
        DependencyTimer timer = byShard.get(on);
        return timer != null ? timer : statements;
    }

    /**
     * One prepared statement on a pooled connection, bounded. Through {@code withConnection}, not the
     * pool's own {@code preparedQuery}: in Vert.x 4.5 the latter leaves its connection-timeout timer
     * running when taking a connection fails (PostgreSQL down), and the timer then fails the finished
     * query a second time, which Vert.x logs as {@code IllegalStateException: Result is already
     * complete} (eclipse-vertx/vertx-sql-client#1706).
     */
    public Uni<RowSet<Row>> query(String sql, Tuple args) {
        return query(pool, sql, args);
    }

    /** The same on the shard that holds {@code client}'s data ({@link Shards}): every statement of a client's request. */
    public Uni<RowSet<Row>> query(String client, String sql, Tuple args) {
        String shard = shards.shardOf(client);
        if (!shards.migrated(shard)) {
            return Uni.createFrom().failure(new DependencyTimeoutException("The shard " + shard + " was down at start and is "
                    + "not migrated yet"));
        }
        return query(shards.all().get(shard), sql, args)
                // the client moved away from that shard: this instance learns where to (for the retry) at once
                .onFailure(Postgres::fenced).invoke(() -> shards.readPlacements().subscribe().with(ignored -> { }));
    }

    /**
     * Whether the statement met its client's fence on a shard the client moved away from ({@code LM001}, V8's
     * {@code client_fences}): nothing of it committed, and it is the client's pause alone, never its shard's outage.
     */
    public static boolean fenced(Throwable failure) {
        return failure instanceof PgException pg && FENCED.equals(pg.getSqlState());
    }

    private static final String FENCED = "LM001";

    /** The same on one shard's pool ({@link Shards#all}): the background jobs, which run on every shard. */
    public Uni<RowSet<Row>> query(Pool on, String sql, Tuple args) {
        return bounded(on, () -> on.withConnection(connection -> connection.preparedQuery(sql).execute(args))
                .onFailure(Postgres::rolledBack).retry().atMost(ROLLED_BACK_RETRIES));
    }

    /**
     * Whether PostgreSQL itself rolled the statement back as a deadlock's victim ({@code 40P01}) or a
     * serialization failure ({@code 40001}): nothing of it committed, so running it again is safe, and a
     * client never sees either. The ledger's functions take their locks in one order, so neither is expected.
     */
    static boolean rolledBack(Throwable failure) {
        return failure instanceof PgException pg && ("40P01".equals(pg.getSqlState()) || "40001".equals(pg.getSqlState()));
    }
}
