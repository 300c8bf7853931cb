package dev.ledger.dependency;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.PoolOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one way statements reach PostgreSQL, while PostgreSQL cannot be reached. */
class PostgresTest {
    private static final Duration POOL_CONNECTION_TIMEOUT = Duration.ofMillis(300);

    private Vertx vertx;
    private final List<Throwable> unhandled = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        // what Vert.x reports of a callback that threw, e.g. a promise completed twice
        vertx.exceptionHandler(unhandled::add);
    }

    @AfterEach
    void stop() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @Test
    void aStatementThatFindsNoDatabaseFailsOnceAndNothingCompletesItAgain() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort(); // nothing listens once it is closed: connections are refused
        }
        Pool pool = Pool.newInstance(PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2).setConnectionTimeout((int) POOL_CONNECTION_TIMEOUT.toMillis())
                        .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS))
                .connectingTo(new PgConnectOptions().setHost("127.0.0.1").setPort(closedPort).setUser("postgres")
                        .setDatabase("postgres"))
                .using(vertx)
                .build());
        Postgres guard = new Postgres(pool, Duration.ofSeconds(5), new SimpleMeterRegistry());

        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        vertx.getOrCreateContext().runOnContext(ignored -> guard.query("SELECT 1", Tuple.tuple()).subscribe().with(
                rows -> failure.completeExceptionally(new AssertionError("answered without a database")),
                failure::complete));

        assertNotNull(failure.get(10, TimeUnit.SECONDS), "the statement fails (connection refused)");
        // The pool's connection timeout passes after the failure: nothing may complete the statement again.
        await().during(POOL_CONNECTION_TIMEOUT.multipliedBy(3)).atMost(POOL_CONNECTION_TIMEOUT.multipliedBy(5))
                .untilAsserted(() -> assertTrue(unhandled.isEmpty(), () -> "Vert.x reported " + unhandled));
        pool.closeAndAwait();
    }
    /**
     * A statement PostgreSQL rolled back itself, as a deadlock's victim or a serialization failure, committed
     * nothing: it runs again, and the caller sees its answer. Any other error is the caller's at once.
     */
    @Test
    void aStatementRolledBackByPostgresItselfRunsAgainAndNoOtherFailureDoes() throws Exception {
        Pool pool = Pool.newInstance(PgBuilder.pool().with(new PoolOptions().setMaxSize(2))
                .connectingTo(new PgConnectOptions().setHost("127.0.0.1").setPort(5432).setUser("postgres").setDatabase("postgres"))
                .using(vertx).build());
        String schema = "ledger_postgres_test_" + UUID.randomUUID().toString().replace("-", "");
        // fails(code, times): raises SQLSTATE code on its first `times` calls (a sequence counts them, whatever rolls back)
        pool.query("CREATE SCHEMA " + schema).executeAndAwait();
        try {
            pool.query("CREATE SEQUENCE " + schema + ".calls").executeAndAwait();
            pool.query("CREATE FUNCTION " + schema + ".fails(code text, times integer) RETURNS bigint LANGUAGE plpgsql AS $$"
                    + " DECLARE n bigint := nextval('" + schema + ".calls'); BEGIN"
                    + " IF n <= times THEN RAISE EXCEPTION 'failing on purpose' USING ERRCODE = code; END IF; RETURN n; END $$")
                    .executeAndAwait();
            Postgres guard = new Postgres(pool, Duration.ofSeconds(10), new SimpleMeterRegistry());

            assertEquals(3L, answer(guard, "SELECT " + schema + ".fails('40P01', 2) AS n"), "two deadlocks, then the answer");
            assertEquals(5L, answer(guard, "SELECT " + schema + ".fails('40001', 4) AS n"), "a serialization failure, then the answer");
            Throwable unique = failure(guard, "SELECT " + schema + ".fails('23505', 6) AS n");
            assertEquals("23505", ((PgException) unique).getSqlState());
            Throwable always = failure(guard, "SELECT " + schema + ".fails('40P01', 1000) AS n");
            assertEquals("40P01", ((PgException) always).getSqlState(), "at most " + Postgres.ROLLED_BACK_RETRIES + " runs again");
            long calls = pool.query("SELECT last_value FROM " + schema + ".calls").executeAndAwait().iterator().next().getLong(0);
            assertEquals(3 + 2 + 1 + Postgres.ROLLED_BACK_RETRIES + 1, calls, "each run counted once: no retry of the unique violation");
        } finally {
            pool.query("DROP SCHEMA " + schema + " CASCADE").executeAndAwait();
            pool.closeAndAwait();
        }
    }

    private Object answer(Postgres guard, String sql) throws Exception {
        CompletableFuture<Object> answer = new CompletableFuture<>();
        vertx.getOrCreateContext().runOnContext(ignored -> guard.query(sql, Tuple.tuple()).subscribe().with(
                rows -> answer.complete(rows.iterator().next().getValue("n")), answer::completeExceptionally));
        return answer.get(20, TimeUnit.SECONDS);
    }

    private Throwable failure(Postgres guard, String sql) throws Exception {
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        vertx.getOrCreateContext().runOnContext(ignored -> guard.query(sql, Tuple.tuple()).subscribe().with(
                rows -> failure.completeExceptionally(new AssertionError("answered")), failure::complete));
        return failure.get(20, TimeUnit.SECONDS);
    }
}
