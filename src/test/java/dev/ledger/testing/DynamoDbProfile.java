package dev.ledger.testing;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The engine's tests with DynamoDB as the store (dynalite, {@link DynamoDbLab}) instead of Redis: the failure
 * lab's proxies and settings, with an original's copies allowed to wait 8 s, a database patient with a
 * test's row lock, and DynamoDB calls bounded at 2 s. One profile for every DynamoDB test class, so that they share one started application.
 */
public class DynamoDbProfile implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(FailureLab.class), new TestResourceEntry(DynamoDbLab.class));
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> overrides = new HashMap<>(new FailureLabProfile().getConfigOverrides());
        overrides.put("ledger.idempotency.max-wait", "8s");
        overrides.put("ledger.database.timeout", "20s");
        overrides.put("ledger.messaging.retry-delay", "200ms");
        // as DoorsProfile's Redis timeout: a burst of 50 first calls (connections opened through the proxy, the
        // SDK's code run cold, dynalite one Node.js thread) took over 500 ms on a busy machine, and went to
        // PostgreSQL instead of waiting; the failure tests' bounds follow it (DynamoDbFailureTest)
        overrides.put("ledger.fast-path.timeout", "2s");
        return overrides;
    }
}
