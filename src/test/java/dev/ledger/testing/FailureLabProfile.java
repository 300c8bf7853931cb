package dev.ledger.testing;

import dev.ledger.outbox.EventsSettings;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The application behind breakable proxies, with a breaker that half-opens quickly, and events on:
 * published to the shared broker, the relay polling as in production (one profile for every failure
 * test, so that they share one started application).
 */
public class FailureLabProfile implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(FailureLab.class));
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> overrides = new HashMap<>(EventsSettings.overrides());
        overrides.remove("ledger.events.relay.poll-interval");
        overrides.putAll(Map.of("ledger.fast-path.breaker.delay", "200ms",
                // a pool that notices a dead server quickly
                "quarkus.datasource.reactive.idle-timeout", "PT5S"));
        return overrides;
    }
}
