package dev.ledger.config;

import com.rabbitmq.client.ConnectionFactory;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The RabbitMQ connection the service's own clients use beside SmallRye's channels: the standard
 * settings the connector reads ({@code rabbitmq-host}, {@code -port}, {@code -username}, {@code -password},
 * {@code -virtual-host}; {@code RABBITMQ_HOST}, ...), read here once. Their values for the packaged
 * application are in application.properties; in dev mode and tests they come from Dev Services or the
 * pom's local-services profile, like the connector's.
 */
@ApplicationScoped
public class RabbitMqConnection {
    private final String host;
    private final int port;
    private final String username;
    private final String password;
    private final String virtualHost;

    public RabbitMqConnection(@ConfigProperty(name = "rabbitmq-host") String host,
                              @ConfigProperty(name = "rabbitmq-port") int port,
                              @ConfigProperty(name = "rabbitmq-username") String username,
                              @ConfigProperty(name = "rabbitmq-password") String password,
                              @ConfigProperty(name = "rabbitmq-virtual-host") String virtualHost) {
        this.host = host;
        this.port = port;
        this.username = username;
        this.password = password;
        this.virtualHost = virtualHost;
    }

    /** For RabbitMQ's Java client; connections it makes do not recover by themselves (their owner does). */
    public ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(host);
        factory.setPort(port);
        factory.setUsername(username);
        factory.setPassword(password);
        factory.setVirtualHost(virtualHost);
        factory.setAutomaticRecoveryEnabled(false);
        factory.setTopologyRecoveryEnabled(false);
        return factory;
    }

    public String describe() {
        return host + ":" + port + " (virtual host " + virtualHost + ")";
    }
}
