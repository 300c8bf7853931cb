package dev.ledger.config;

import dev.ledger.testing.LedgerSettings;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each default of the service's own settings is written once, renamed settings are still read, and the settings the
 * RabbitMQ connector reads per message come from their sources once.
 */
class SettingsTest {
    private static final Pattern UNPROFILED_LEDGER_SETTING = Pattern.compile("^(ledger\\.[a-z0-9.-]+)\\s*=");
    /** An expression's fallback, {@code ${ledger.x:fallback}}: a default written again. */
    private static final Pattern EXPRESSION_FALLBACK = Pattern.compile("\\$\\{(ledger\\.[a-z0-9.-]+):");

    @Test
    void eachDefaultIsWrittenOnceInLedgerConfigNotAgainInApplicationProperties() throws IOException {
        Map<String, Optional<String>> typed = LedgerSettings.defaults();
        assertTrue(typed.get("ledger.fast-path.breaker.delay").isPresent(), "read LedgerConfig's defaults: " + typed);
        List<String> again = new ArrayList<>();
        int read = 0;
        for (String line : Files.readAllLines(Path.of("src/main/resources/application.properties"))) {
            Matcher fallback = EXPRESSION_FALLBACK.matcher(line);
            while (fallback.find()) {
                if (typed.getOrDefault(fallback.group(1), Optional.empty()).isPresent()) {
                    again.add(line);
                }
            }
            Matcher setting = UNPROFILED_LEDGER_SETTING.matcher(line);
            if (setting.find()) {
                read++;
                assertTrue(typed.containsKey(setting.group(1)), "application.properties sets what LedgerConfig does not read: " + line);
                if (typed.get(setting.group(1)).isPresent()) {
                    again.add(line);
                }
            }
        }
        assertTrue(read > 0, "read application.properties' ledger.* lines");
        assertEquals(List.of(), again, "defaults written both in LedgerConfig (@WithDefault) and in application.properties");
    }

    @Test
    void aRenamedSettingIsStillReadUnderItsOldNameWhileTheNewOneIsUnset() {
        SmallRyeConfig old = config(Map.of("ledger.redis.fail-closed", "true", "ledger.redis.breaker.delay", "7s"));
        assertEquals("true", old.getRawValue("ledger.fast-path.fail-closed"));
        assertEquals("7s", old.getRawValue("ledger.fast-path.breaker.delay"));

        SmallRyeConfig both = config(Map.of("ledger.redis.fail-closed", "true", "ledger.fast-path.fail-closed", "false"));
        assertEquals("false", both.getRawValue("ledger.fast-path.fail-closed"), "the new name wins");

        SmallRyeConfig none = config(Map.of());
        assertEquals(null, none.getRawValue("ledger.fast-path.timeout"));
        assertFalse(none.getOptionalValue("ledger.fast-path.fail-closed", String.class).isPresent());
    }

    @Test
    void theOldPrefetchIsReadAsBothBrokersOwnBoundWhileEachIsUnset() {
        LedgerConfig.Messaging defaults = mapped(Map.of()).messaging();
        assertEquals(256, defaults.rabbitmq().prefetch());
        assertEquals(64, defaults.kafka().maxHeld());

        LedgerConfig.Messaging old = mapped(Map.of("ledger.messaging.prefetch", "32")).messaging();
        assertEquals(32, old.rabbitmq().prefetch());
        assertEquals(32, old.kafka().maxHeld());
        // and where an expression names the new one, as application.properties gives the connector its prefetch
        String connector = "mp.messaging.incoming.commands.max-outstanding-messages";
        assertEquals(32, configWithExpressions(Map.of("ledger.messaging.prefetch", "32",
                connector, "${ledger.messaging.rabbitmq.prefetch}")).getValue(connector, Integer.class));
        assertEquals(256, configWithExpressions(Map.of(connector, "${ledger.messaging.rabbitmq.prefetch}"))
                .getValue(connector, Integer.class));

        LedgerConfig.Messaging both = mapped(Map.of("ledger.messaging.prefetch", "32", "ledger.messaging.rabbitmq.prefetch", "128"))
                .messaging();
        assertEquals(128, both.rabbitmq().prefetch(), "the new name wins");
        assertEquals(32, both.kafka().maxHeld());

        // a new name's @WithDefault is a value too, from the last source: it must not hide the old name's (these old
        // names are no longer in the mapping, so they are read as environment variables, as the docs give them)
        LedgerConfig renamed = configWithExpressions(new EnvConfigSource(
                Map.of("LEDGER_REDIS_BREAKER_DELAY", "7s", "LEDGER_MESSAGING_PAUSE", "9s"), 300)).getConfigMapping(LedgerConfig.class);
        assertEquals(Duration.ofSeconds(7), renamed.fastPath().breaker().delay());
        assertEquals(Duration.ofSeconds(9), renamed.messaging().rabbitmq().pause());
    }

    @Test
    void theOldTimeoutIsTheChosenStoresOwn() {
        Map<String, String> both = Map.of("ledger.redis.timeout", "111ms", "ledger.idempotency.dynamodb.timeout", "222ms");
        assertEquals("111ms", config(both).getRawValue("ledger.fast-path.timeout"));
        Map<String, String> dynamodb = new java.util.HashMap<>(both);
        dynamodb.put("ledger.idempotency.store", "dynamodb");
        assertEquals("222ms", config(dynamodb).getRawValue("ledger.fast-path.timeout"));
        SmallRyeConfig profiled = new SmallRyeConfigBuilder().addDefaultInterceptors().withProfile("prod")
                .withInterceptors(new RenamedSettings()).withSources(new PropertiesConfigSource(Map.of("ledger.redis.timeout", "111ms",
                        "ledger.idempotency.dynamodb.timeout", "222ms", "%prod.ledger.idempotency.store", "dynamodb"), "test", 100)).build();
        assertEquals("222ms", profiled.getRawValue("ledger.fast-path.timeout"), "the store chosen in a profile");
        dynamodb.put("ledger.fast-path.timeout", "333ms");
        assertEquals("333ms", config(dynamodb).getRawValue("ledger.fast-path.timeout"));
    }

    @Test
    void theSettingsTheConnectorReadsPerMessageAreLookedUpOnceAndAnyOtherEveryTime() {
        Map<String, Integer> lookups = new ConcurrentHashMap<>();
        PropertiesConfigSource source = new PropertiesConfigSource(Map.of(
                "mp.messaging.outgoing.dead-letters.retry-on-fail-attempts", "6",
                "mp.messaging.outgoing.dead-letters.default-routing-key", "transactions",
                "mp.messaging.incoming.commands.retry-on-fail-attempts", "2"), "test", 100) {
            @Override
            public ConfigValue getConfigValue(String name) {
                lookups.merge(name, 1, Integer::sum);
                return super.getConfigValue(name);
            }
        };
        SmallRyeConfig config = new SmallRyeConfigBuilder().withInterceptors(new SettingsReadPerMessage(), new RenamedSettings())
                .withSources(source).build();
        for (int message = 0; message < 3; message++) {
            assertEquals(6, config.getValue("mp.messaging.outgoing.dead-letters.retry-on-fail-attempts", Integer.class));
            assertEquals("transactions", config.getValue("mp.messaging.outgoing.dead-letters.default-routing-key", String.class));
            assertFalse(config.getOptionalValue("mp.messaging.outgoing.dead-letters.retry-on-fail-interval", Integer.class).isPresent());
            assertEquals(2, config.getValue("mp.messaging.incoming.commands.retry-on-fail-attempts", Integer.class));
        }
        assertEquals(1, lookups.get("mp.messaging.outgoing.dead-letters.retry-on-fail-attempts"), "read from its source once: " + lookups);
        assertEquals(1, lookups.get("mp.messaging.outgoing.dead-letters.default-routing-key"), lookups.toString());
        assertEquals(1, lookups.get("mp.messaging.outgoing.dead-letters.retry-on-fail-interval"), "absent, and asked once: " + lookups);
        assertEquals(3, lookups.get("mp.messaging.incoming.commands.retry-on-fail-attempts"), "any other setting every time: " + lookups);
    }

    /** The service's settings as it reads them: its mapping, with its defaults, behind the interceptor. */
    private static LedgerConfig mapped(Map<String, String> properties) {
        return configWithExpressions(properties).getConfigMapping(LedgerConfig.class);
    }

    /** The service's configuration from these properties, with SmallRye's own interceptors (expressions, profiles). */
    private static SmallRyeConfig configWithExpressions(Map<String, String> properties) {
        return configWithExpressions(new PropertiesConfigSource(properties, "test", 100));
    }

    /** The same from any source, this interceptor among SmallRye's own in its place. */
    private static SmallRyeConfig configWithExpressions(ConfigSource source) {
        return new SmallRyeConfigBuilder().addDefaultInterceptors().withInterceptors(new RenamedSettings())
                .withMapping(LedgerConfig.class).withConverter(Duration.class, 100, new DurationConverter())
                .withSources(source).build();
    }

    private static SmallRyeConfig config(Map<String, String> properties) {
        return new SmallRyeConfigBuilder().withInterceptors(new RenamedSettings())
                .withSources(new PropertiesConfigSource(properties, "test", 100)).build();
    }
}
