package dev.ledger.commands.rabbitmq;

import dev.ledger.config.LedgerConfig;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * While commands come over RabbitMQ, an instance is ready when it is connected to the broker to consume them (its
 * queue declared, consuming or paused) and to publish their outcomes, as SmallRye's channels reported before the
 * door had a consumer of its own.
 */
@Readiness
@ApplicationScoped
public class RabbitMqCommandsReadinessCheck implements HealthCheck {
    private final boolean enabled;
    private final RabbitMqCommands commands;
    private final RabbitMqOutcomes outcomes;

    public RabbitMqCommandsReadinessCheck(LedgerConfig config, RabbitMqCommands commands, RabbitMqOutcomes outcomes) {
        this.enabled = config.messaging().rabbitmq().enabled();
        this.commands = commands;
        this.outcomes = outcomes;
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder check = HealthCheckResponse.named("Commands (RabbitMQ)");
        if (!enabled) {
            return check.up().withData("commands", "switched off").build();
        }
        boolean consuming = commands.connected();
        boolean publishing = outcomes.connected();
        return check.status(consuming && publishing).withData("queue", RabbitMqCommands.QUEUE)
                .withData("consuming", consuming && !commands.paused()).withData("paused", commands.paused())
                .withData("outcomes", publishing).build();
    }
}
