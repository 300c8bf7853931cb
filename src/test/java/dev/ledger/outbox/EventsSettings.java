package dev.ledger.outbox;

import dev.ledger.testing.OtlpReceiver;

import java.util.Map;

/**
 * The settings the test profiles with events on build on ({@code DoorsProfile}, {@code FailureLabProfile}): events
 * switched on, published to the shared broker in the tests' virtual host, the relay polling only once an hour
 * (whatever the tests see published within seconds, the request path's wake-up published), and traces on,
 * exported to the tests' OTLP receiver ({@link OtlpReceiver}) at once.
 */
public final class EventsSettings {
    private EventsSettings() {
    }

    public static Map<String, String> overrides() {
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
