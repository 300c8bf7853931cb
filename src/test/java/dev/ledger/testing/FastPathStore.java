package dev.ledger.testing;

import io.quarkus.redis.datasource.RedisDataSource;

import java.util.List;

/**
 * The fast path's store as the engine's tests see it, behind the same tests for both stores: Redis
 * ({@link #redis}) or DynamoDB ({@link DynamoDbLab#store}). Each test class names its store; the tests
 * themselves never ask which it is.
 */
public interface FastPathStore {
    /** Forgets every key, as a restart, failover or flush does (the tests' own database or table only). */
    void flush();

    /** Holds the key in flight for {@code millis} as another request would. */
    void holdInFlight(String keyId, String fingerprintHex, String owner, long millis);

    /** Lets go of the key, as a holder that crashed and whose lease ended. */
    void forget(String keyId);

    /** The name of every stored key, as the store keeps it. */
    List<String> names();

    /** The state (PROCESSING, COMPLETED) of every stored key. */
    List<String> states();

    /** Whether {@code name} (one of {@link #names}) is a key id, the SHA-256 hex of client and key, in the store's spelling. */
    boolean isKeyId(String name);

    /** The breaker of the store's calls ({@code dev.ledger.dependency.Breakers}). */
    String breaker();

    /** Its name in the readiness check's data. */
    String readinessName();

    /** The store in Redis, through the tests' Redis database. */
    static FastPathStore redis(RedisDataSource redis) {
        return new FastPathStore() {
            @Override
            public void flush() {
                redis.execute("FLUSHDB");
            }

            @Override
            public void holdInFlight(String keyId, String fingerprintHex, String owner, long millis) {
                redis.hash(String.class).hset(name(keyId), java.util.Map.of("state", "PROCESSING", "fp", fingerprintHex, "owner", owner));
                redis.key().pexpire(name(keyId), millis);
            }

            @Override
            public void forget(String keyId) {
                redis.key().del(name(keyId));
            }

            @Override
            public List<String> names() {
                return redis.key().keys("*");
            }

            @Override
            public List<String> states() {
                return redis.key().keys("idem:*").stream().map(k -> redis.hash(String.class).hget(k, "state")).toList();
            }

            @Override
            public boolean isKeyId(String name) {
                return name.matches("idem:\\{[0-9a-f]{64}}");
            }

            @Override
            public String breaker() {
                return "redis";
            }

            @Override
            public String readinessName() {
                return "redis";
            }

            private String name(String keyId) {
                return "idem:{" + keyId + "}";
            }
        };
    }
}
