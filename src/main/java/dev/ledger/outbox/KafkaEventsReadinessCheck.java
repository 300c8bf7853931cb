package dev.ledger.outbox;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * While events go to Kafka, an instance is ready once their topic exists (found or created at start), so
 * that a consumer can subscribe as soon as the service is ready. After that, Kafka being away only delays
 * events (they wait in PostgreSQL) and readiness stays up: requests do not need the events' broker.
 */
@Readiness
@ApplicationScoped
public class KafkaEventsReadinessCheck implements HealthCheck {
    private final KafkaEventPublisher publisher;

    public KafkaEventsReadinessCheck(KafkaEventPublisher publisher) {
        this.publisher = publisher;
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder check = HealthCheckResponse.named("Events (Kafka)");
        if (!publisher.enabled()) {
            return check.up().withData("events", "switched off").build();
        }
        return check.status(publisher.topicExists()).withData("topic", publisher.topic())
                .withData("found", publisher.topicExists()).build();
    }
}
