package dev.ledger.commands.rabbitmq;

import dev.ledger.config.LedgerConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the command door asks of the broker besides consuming and publishing: every few seconds the depth of the
 * commands queue, the consumer's lag, in /q/metrics as {@code ledger_commands_queued} (-1 until read). Asked on the
 * consumer's own channel, from the door's thread for calls that wait ({@link RabbitMqLink}); while the consumer is not
 * connected the last depth read stays.
 */
@ApplicationScoped
public class RabbitMqAdmin {
    private static final Logger LOG = Logger.getLogger(RabbitMqAdmin.class);
    private static final long EVERY_MILLIS = 5000;

    private final RabbitMqLink link;
    private final RabbitMqCommands commands;
    private final boolean enabled;
    private final AtomicLong queued = new AtomicLong(-1);

    public RabbitMqAdmin(RabbitMqLink link, RabbitMqCommands commands, LedgerConfig config, MeterRegistry metrics) {
        this.link = link;
        this.commands = commands;
        this.enabled = config.messaging().rabbitmq().enabled();
        if (enabled) {
            Gauge.builder("ledger.commands.queued", queued, AtomicLong::get)
                    .description("Commands waiting in the commands queue (the consumer's lag); -1 until read")
                    .register(metrics);
        }
    }

    void start(@Observes StartupEvent started) {
        if (enabled) {
            link.thread().scheduleWithFixedDelay(this::look, 0, EVERY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    private void look() {
        try {
            commands.depth().ifPresent(queued::set);
        } catch (IOException | RuntimeException failure) {
            LOG.debugf("Broker not reachable for the lag: %s", failure);
        }
    }
}
