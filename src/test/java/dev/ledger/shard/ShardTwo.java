package dev.ledger.shard;

import dev.ledger.testing.PostgresServer;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.sql.Connection;
import java.util.Map;

/**
 * The shard {@code two}: a PostgreSQL cluster of the test's own (on {@code tests.shards.pg-port}, or a free port),
 * holding the client {@code dev}, the one most tests act as (so that their sharded run, the {@code Sharded…Test}
 * classes, runs them there); every other client ({@code other}) stays on the default shard, the tests' database.
 */
public class ShardTwo implements QuarkusTestResourceLifecycleManager {
    public static final String CLIENT = "dev";
    private static PostgresServer server;

    @Override
    public Map<String, String> start() {
        try {
            server = new PostgresServer(Integer.getInteger("tests.shards.pg-port", 0));
        } catch (Exception e) {
            throw new IllegalStateException("could not start the shard's PostgreSQL", e);
        }
        return Map.of("ledger.shards.two.url", "postgresql://" + server.host() + "/postgres",
                "ledger.shards.two.username", "postgres",
                "ledger.shards.two.clients", CLIENT);
    }

    @Override
    public void stop() {
        try {
            server.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static PostgresServer server() {
        return server;
    }

    static Connection connect() throws Exception {
        return server.connect("postgres");
    }
}
