package dev.ledger.messaging;

import dev.ledger.config.LedgerConfig;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.Uni;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.rabbitmq.RabbitMQClient;
import io.vertx.rabbitmq.RabbitMQOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * What the command door asks of the broker besides its channels, on a connection of its own: the
 * outcome exchange declared at start (the connector would declare it only at the first outcome,
 * and consumers of outcomes bind to it before), and every few seconds the depth of the commands
 * queue, the consumer's lag ({@link CommandMetrics}). It reconnects by itself after the broker
 * went away.
 */
@ApplicationScoped
public class CommandBroker {
    private static final Logger LOG = Logger.getLogger(CommandBroker.class);
    private static final long EVERY_MILLIS = 5000;

    private final CommandMetrics metrics;
    private final boolean enabled;
    private final String queue;
    private final String outcomesExchange;
    private RabbitMQClient client;
    private long timer = -1;
    private boolean declared;

    public CommandBroker(CommandMetrics metrics, LedgerConfig config) {
        this.metrics = metrics;
        this.enabled = config.messaging().rabbitmq().enabled();
        Config settings = ConfigProvider.getConfig();
        this.queue = settings.getOptionalValue("mp.messaging.incoming.commands.queue.name", String.class).orElse("ledger.commands");
        this.outcomesExchange = settings.getOptionalValue("mp.messaging.outgoing.outcomes.exchange.name", String.class)
                .orElse("ledger.outcomes");
    }

    void start(@Observes StartupEvent started, Vertx vertx) {
        if (!enabled) {
            return;
        }
        client = RabbitMQClient.create(vertx, options(ConfigProvider.getConfig()));
        look();
        timer = vertx.setPeriodic(EVERY_MILLIS, id -> look());
    }

    private void look() {
        Uni<Void> connected = client.isConnected() ? Uni.createFrom().voidItem() : client.start();
        connected
                .chain(() -> declared ? Uni.createFrom().voidItem()
                        // as the connector declares it (durable, not auto-deleted), so both declarations agree
                        : client.exchangeDeclare(outcomesExchange, "topic", true, false, new JsonObject())
                                .invoke(() -> declared = true))
                .chain(() -> client.messageCount(queue))
                .subscribe().with(metrics::queued,
                        failure -> LOG.debugf("Broker not reachable for the lag and the outcome exchange: %s", failure));
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

    /** The broker connection of Quarkus' settings ({@code rabbitmq-*}), as the connector reads them. */
    private static RabbitMQOptions options(Config config) {
        return new RabbitMQOptions()
                .setHost(config.getOptionalValue("rabbitmq-host", String.class).orElse("localhost"))
                .setPort(config.getOptionalValue("rabbitmq-port", Integer.class).orElse(5672))
                .setUser(config.getOptionalValue("rabbitmq-username", String.class).orElse("guest"))
                .setPassword(config.getOptionalValue("rabbitmq-password", String.class).orElse("guest"))
                .setVirtualHost(config.getOptionalValue("rabbitmq-virtual-host", String.class).orElse("/"))
                .setReconnectAttempts(0)
                .setAutomaticRecoveryEnabled(false);
    }
}
