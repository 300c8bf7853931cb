package dev.ledger.outbox;

import dev.ledger.testing.OtlpReceiver;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;

/**
 * Events switched on, published to the shared broker in the tests' virtual host. The relay polls only
 * once an hour: whatever the tests see published within seconds, the request path's wake-up published.
 * Traces on, exported to the tests' OTLP receiver ({@link OtlpReceiver}) at once. The settings the
 * profiles with events on build on ({@code DoorsProfile}, which the outbox and tracing tests use, and
 * {@code FailureLabProfile}); no test class starts an application of this profile alone.
 */
public class EventsProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "ledger.events.rabbitmq.enabled", "true",
                "rabbitmq-host", "127.0.0.1",
                "rabbitmq-port", Integer.toString(EventTap.SHARED_PORT),
                "rabbitmq-virtual-host", EventTap.SHARED_VHOST,
                "ledger.events.relay.poll-interval", "1h",
                // each test's tap binds a queue of its own; none piles up in a queue of the service's on the shared broker
                "ledger.events.rabbitmq.queue", "",
                "quarkus.otel.exporter.otlp.traces.endpoint", OtlpReceiver.endpoint(),
                "quarkus.otel.exporter.otlp.traces.protocol", "http/protobuf",
                "quarkus.otel.bsp.schedule.delay", "100ms");
    }
}
