package dev.ledger.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.net.URI;
import java.util.Map;

/**
 * Puts the application's Postgres and Redis behind {@link TcpProxy proxies} the tests can break,
 * with a Redis server of the tests' own. Postgres is the tests' usual database (its URL comes
 * from the surefire environment); only the reactive request path goes through the proxy.
 */
public class FailureLab implements QuarkusTestResourceLifecycleManager {
    private static RedisServer redis;
    private static TcpProxy redisProxy;
    private static TcpProxy postgresProxy;

    public static RedisServer redis() {
        return redis;
    }

    public static TcpProxy redisProxy() {
        return redisProxy;
    }

    public static TcpProxy postgresProxy() {
        return postgresProxy;
    }

    @Override
    public Map<String, String> start() {
        try {
            String reactiveUrl = System.getenv().getOrDefault("QUARKUS_DATASOURCE_REACTIVE_URL",
                    "postgresql://127.0.0.1:5432/postgres?search_path=ledger_test");
            URI postgres = URI.create(reactiveUrl);
            redis = new RedisServer();
            redisProxy = new TcpProxy(redis.port());
            postgresProxy = new TcpProxy(postgres.getPort());
            return Map.of(
                    "quarkus.redis.hosts", "redis://127.0.0.1:" + redisProxy.port(),
                    "quarkus.datasource.reactive.url",
                    "postgresql://127.0.0.1:" + postgresProxy.port() + postgres.getRawPath()
                            + (postgres.getRawQuery() == null ? "" : "?" + postgres.getRawQuery()));
        } catch (Exception e) {
            throw new IllegalStateException("Cannot start the failure lab", e);
        }
    }

    /** Every test starts with both dependencies healthy. */
    public static void healAll() {
        redisProxy.heal();
        postgresProxy.heal();
    }

    @Override
    public void stop() {
        try {
            redisProxy.close();
            postgresProxy.close();
            redis.close();
        } catch (Exception ignored) {
            // the JVM is ending
        }
    }
}
