package dev.ledger.dependency;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
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
}
