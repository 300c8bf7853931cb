package dev.ledger.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/** The application behind breakable proxies, with a breaker that half-opens quickly. */
public class FailureLabProfile implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(FailureLab.class));
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("ledger.redis.breaker.delay", "200ms",
                // a pool that notices a dead server quickly
                "quarkus.datasource.reactive.idle-timeout", "PT5S");
    }

    /** The same, failing closed when Redis is unavailable. */
    public static class FailClosed extends FailureLabProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> overrides = new java.util.HashMap<>(super.getConfigOverrides());
            overrides.put("ledger.redis.fail-closed", "true");
            return overrides;
        }
    }
}
