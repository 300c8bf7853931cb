package dev.ledger.testing;

import dev.ledger.outbox.EventsSettings;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.HashMap;
import java.util.Map;

/**
 * The application with both command doors open (RabbitMQ, and Kafka on the tests' broker) and patient
 * dependencies: an original held in flight by a test's row lock neither times out in PostgreSQL nor
 * opens the Redis breaker on a busy machine, its copies wait up to 8 s, and a command that met an
 * unavailable dependency comes back after 200 ms; and events and traces on, as {@link EventsSettings} sets them
 * (published to the shared broker, the relay's poll at an hour, traces to the tests' OTLP receiver). One
 * profile for the door tests, the waiting tests, the outbox's and the tracing tests, so that they share one
 * started application.
 */
public class DoorsProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> overrides = new HashMap<>(EventsSettings.overrides());
        overrides.putAll(Map.of("ledger.messaging.kafka.enabled", "true",
                "kafka.bootstrap.servers", KafkaBroker.bootstrap(),
                "ledger.database.timeout", "20s",
                "ledger.fast-path.timeout", "3s",
                "ledger.idempotency.max-wait", "8s",
                "ledger.messaging.retry-delay", "200ms"));
        return overrides;
    }
}
