package dev.ledger.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;

/** The application against the tests' Redis Cluster ({@link RedisCluster}), started when missing and left running. */
public class RedisClusterResource implements QuarkusTestResourceLifecycleManager {
    @Override
    public Map<String, String> start() {
        RedisCluster.start();
        RedisCluster.flushAll();
        return Map.of("quarkus.redis.client-type", "cluster", "quarkus.redis.hosts", RedisCluster.hosts());
    }

    @Override
    public void stop() {
        // left running for the next test class and run (.ci/redis-cluster stop removes it)
    }
}
