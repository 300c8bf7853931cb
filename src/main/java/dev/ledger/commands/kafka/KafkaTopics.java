package dev.ledger.commands.kafka;

import dev.ledger.config.LedgerConfig;
import dev.ledger.security.ApiKeys;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.ConfigurationException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The topics of the Kafka door. Each client produces to {@code ledger.commands.<client-id>}, so the
 * client is the topic's suffix and the broker's topic ACLs authenticate producers; its outcomes go to
 * {@code ledger.outcomes.<client-id>}; unreadable records are copied to {@code ledger.dead.commands},
 * which is outside the commands' pattern.
 *
 * <p>While Kafka is on, the configured clients are checked at start: a client id that cannot be a topic
 * name's suffix, or whose topic Kafka would confuse with another's ({@code .} and {@code _} collide in
 * its metric names, and it refuses such a pair), stops the application with a clear message.
 */
@ApplicationScoped
public class KafkaTopics {
    public static final String COMMANDS_PREFIX = "ledger.commands.";
    public static final String OUTCOMES_PREFIX = "ledger.outcomes.";
    public static final String DEAD_LETTERS = "ledger.dead.commands";
    /** Kafka's own rule for a topic name: at most 249 of these characters. */
    private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private final boolean enabled;
    private final ApiKeys keys;

    public KafkaTopics(LedgerConfig config, ApiKeys keys) {
        this.enabled = config.messaging().kafka().enabled();
        this.keys = keys;
    }

    void checkTheClientsAtStart(@Observes StartupEvent started) {
        if (enabled) {
            check(keys.clients());
        }
    }

    /** Throws a {@link ConfigurationException} for a client id that cannot name its topics. */
    static void check(Iterable<String> clients) {
        Map<String, String> byCollisionForm = new HashMap<>();
        for (String client : clients) {
            if (!LEGAL.matcher(COMMANDS_PREFIX + client).matches() || !LEGAL.matcher(OUTCOMES_PREFIX + client).matches()) {
                throw new ConfigurationException("Client id '" + client + "' cannot name a Kafka topic ("
                        + COMMANDS_PREFIX + client + "): use letters, digits, '.', '_' and '-' only");
            }
            String other = byCollisionForm.putIfAbsent(client.replace('.', '_'), client);
            if (other != null && !other.equals(client)) {
                throw new ConfigurationException("Client ids '" + other + "' and '" + client + "' would name Kafka topics "
                        + "that differ only by '.' and '_', which Kafka refuses; rename one of them (or switch Kafka off)");
            }
        }
    }

    /** The client a commands topic belongs to, or empty for a topic outside the pattern. */
    static Optional<String> clientOf(String topic) {
        return topic.startsWith(COMMANDS_PREFIX) && topic.length() > COMMANDS_PREFIX.length()
                ? Optional.of(topic.substring(COMMANDS_PREFIX.length())) : Optional.empty();
    }

    static String outcomesOf(String client) {
        return OUTCOMES_PREFIX + client;
    }
}
