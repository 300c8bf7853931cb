package dev.ledger.commands.rabbitmq;

import dev.ledger.config.LedgerConfig;
import dev.ledger.config.RabbitMqConnection;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.rabbitmq.RabbitMQClient;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the command door asks of the broker besides consuming and publishing, on a connection of its own:
 * every few seconds the depth of the commands queue, the consumer's lag, in /q/metrics as
 * {@code ledger_commands_queued} (-1 until read). It reconnects by itself after the broker went away.
 */
@ApplicationScoped
public class RabbitMqAdmin {
    private static final Logger LOG = Logger.getLogger(RabbitMqAdmin.class);
    private static final long EVERY_MILLIS = 5000;

    private final RabbitMqConnection connection;
    private final boolean enabled;
    private final String queue;
    private final AtomicLong queued = new AtomicLong(-1);
    private RabbitMQClient client;
    private long timer = -1;

    public RabbitMqAdmin(RabbitMqConnection connection, LedgerConfig config, MeterRegistry metrics) {
        this.connection = connection;
        this.enabled = config.messaging().rabbitmq().enabled();
        this.queue = RabbitMqCommands.QUEUE;
        if (enabled) {
            Gauge.builder("ledger.commands.queued", queued, AtomicLong::get)
                    .description("Commands waiting in the commands queue (the consumer's lag); -1 until read")
                    .register(metrics);
        }
    }

    void start(@Observes StartupEvent started, Vertx vertx) {
        if (!enabled) {
            return;
        }
        client = RabbitMQClient.create(vertx, connection.options());
        look();
        timer = vertx.setPeriodic(EVERY_MILLIS, id -> look());
    }

    private void look() {
        Uni<Void> connected = client.isConnected() ? Uni.createFrom().voidItem() : client.start();
        connected.chain(() -> client.messageCount(queue))
                .subscribe().with(queued::set, failure -> LOG.debugf("Broker not reachable for the lag: %s", failure));
    }

    void stop(@Observes ShutdownEvent stopping, Vertx vertx) {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
        if (client != null) {
            client.stop().subscribe().with(ignored -> {
            }, ignored -> {
            });
        }
    }
}
