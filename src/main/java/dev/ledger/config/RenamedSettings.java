package dev.ledger.config;

import io.quarkus.runtime.StartupEvent;
import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Settings that were renamed, still read under their old names: a new name the operator did not set takes
 * the old one's value. The fast path's settings were {@code ledger.redis.*} before DynamoDB could be the
 * store; they are {@code ledger.fast-path.*} now, and the old DynamoDB timeout is the same setting as the
 * old Redis timeout, each read while its store is the one chosen. The pause of RabbitMQ's consumption was
 * {@code ledger.messaging.pause} and {@code .breaker.*}, named as if every broker had one; it is
 * {@code ledger.messaging.rabbitmq.*}. {@code ledger.messaging.prefetch} meant two things, RabbitMQ's prefetch and
 * Kafka's budget of held records per shard; it is read as each of {@code ledger.messaging.rabbitmq.prefetch} and
 * {@code ledger.messaging.kafka.max-held}. The commands queue's delivery limit was SmallRye's channel setting
 * {@code mp.messaging.incoming.commands.queue.x-delivery-limit}; it is {@code ledger.messaging.rabbitmq.delivery-limit}
 * since the door consumes with a client of its own. An old name in use is logged once at start, with its new names.
 *
 * <p>Registered through {@code META-INF/services}, as SmallRye Config finds interceptors. Its priority puts it
 * inside SmallRye's expression interceptor (3300) and profile interceptor (3200), where Quarkus puts its own
 * relocations (3195): an expression's names are looked up from the expression interceptor's place in the chain, so a
 * setting such as {@code max-outstanding-messages=${ledger.messaging.rabbitmq.prefetch}} reads the old name too
 * only from below it (seen failing at {@code APPLICATION}: the connector kept the new name's default).
 */
@Priority(Priorities.LIBRARY + 190)
public class RenamedSettings implements ConfigSourceInterceptor {
    private static final Logger LOG = Logger.getLogger(RenamedSettings.class);
    private static final String STORE = "ledger.idempotency.store";
    private static final String TIMEOUT = "ledger.fast-path.timeout";
    private static final String DYNAMODB_TIMEOUT = "ledger.idempotency.dynamodb.timeout";
    private static final String PREFETCH = "ledger.messaging.prefetch";

    /** New name to old name. */
    static final Map<String, String> OLD_NAMES = Map.ofEntries(
            Map.entry("ledger.fast-path.fail-closed", "ledger.redis.fail-closed"),
            Map.entry(TIMEOUT, "ledger.redis.timeout"),
            Map.entry("ledger.fast-path.breaker.request-volume-threshold", "ledger.redis.breaker.request-volume-threshold"),
            Map.entry("ledger.fast-path.breaker.failure-ratio", "ledger.redis.breaker.failure-ratio"),
            Map.entry("ledger.fast-path.breaker.delay", "ledger.redis.breaker.delay"),
            Map.entry("ledger.messaging.rabbitmq.pause", "ledger.messaging.pause"),
            Map.entry("ledger.messaging.rabbitmq.breaker.window", "ledger.messaging.breaker.window"),
            Map.entry("ledger.messaging.rabbitmq.breaker.minimum-calls", "ledger.messaging.breaker.minimum-calls"),
            Map.entry("ledger.messaging.rabbitmq.breaker.failure-ratio", "ledger.messaging.breaker.failure-ratio"),
            Map.entry("ledger.messaging.rabbitmq.prefetch", PREFETCH),
            Map.entry("ledger.messaging.rabbitmq.delivery-limit", "mp.messaging.incoming.commands.queue.x-delivery-limit"),
            Map.entry("ledger.messaging.kafka.max-held", PREFETCH));

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        if (isSet(value)) {
            return value;
        }
        String old = oldName(context, name);
        ConfigValue former = old == null ? null : context.proceed(old);
        return isSet(former) ? former.withName(name) : value;
    }

    /**
     * Whether a value was set by the operator, not only a mapping's {@code @WithDefault}: those defaults are a config
     * source too, the last one ({@code DefaultValuesConfigSource}, ordinal {@link Integer#MIN_VALUE}), and without this
     * a new name's default would hide the old name's value.
     */
    private static boolean isSet(ConfigValue value) {
        return value != null && value.getConfigSourceOrdinal() != Integer.MIN_VALUE;
    }

    /** The old name a new one is read from while it is not set, or null. */
    private static String oldName(ConfigSourceInterceptorContext context, String name) {
        if (TIMEOUT.equals(name)) {
            // from the chain's top: this interceptor sits below the profile and expression interceptors
            ConfigValue store = context.restart(STORE);
            return store != null && "dynamodb".equalsIgnoreCase(store.getValue()) ? DYNAMODB_TIMEOUT : OLD_NAMES.get(name);
        }
        return OLD_NAMES.get(name);
    }

    /** Logs, once at start, the old names the configuration still uses. */
    @ApplicationScoped
    static class Warning {
        void atStart(@Observes StartupEvent start, Config config) {
            List<String> used = new ArrayList<>();
            OLD_NAMES.forEach((now, old) -> config.getOptionalValue(old, String.class)
                    .ifPresent(ignored -> used.add(old + " (now " + now + ")")));
            config.getOptionalValue(DYNAMODB_TIMEOUT, String.class).ifPresent(ignored -> used.add(DYNAMODB_TIMEOUT + " (now " + TIMEOUT + ")"));
            if (!used.isEmpty()) {
                used.sort(null);
                LOG.warnf("Renamed settings still in use, read under their new names: %s. Set the new names instead "
                        + "(docs/configuration.md, \"Renamed settings\")", String.join(", ", used));
            }
        }
    }
}
