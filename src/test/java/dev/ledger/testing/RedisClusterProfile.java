package dev.ledger.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/** The application against the tests' Redis Cluster, with breakers that half-open quickly. */
public class RedisClusterProfile implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(RedisClusterResource.class));
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("ledger.fast-path.breaker.delay", "500ms",
                // a key whose request died with its Redis node is free again soon
                "ledger.idempotency.lease", "3s");
    }
}
