package dev.ledger.outbox;

import dev.ledger.config.LedgerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * While events are switched on, the instance is ready only once the events exchange (and its queue)
 * have been declared on RabbitMQ, so that a consumer deployed after a start can bind at once. Only
 * the start waits for it: a broker that goes away later delays events (they wait in PostgreSQL),
 * never a request, so it does not take the instance out of rotation.
 */
@Readiness
@ApplicationScoped
public class RabbitMqEventsReadinessCheck implements HealthCheck {
    private final RabbitMqEventPublisher publisher;
    private final boolean enabled;
    private final String exchange;

    public RabbitMqEventsReadinessCheck(RabbitMqEventPublisher publisher, LedgerConfig config) {
        this.publisher = publisher;
        this.enabled = config.events().rabbitmq().enabled();
        this.exchange = config.events().rabbitmq().exchange();
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder check = HealthCheckResponse.named("Events (RabbitMQ)");
        if (!enabled) {
            return check.up().withData("events", "switched off").build();
        }
        return check.status(publisher.declared()).withData("exchange", exchange)
                .withData("queue", publisher.queue().orElse("none"))
                .withData("declared", publisher.declared()).build();
    }
}
