package dev.ledger.shard;

import dev.ledger.config.LedgerConfig;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code ledger.shards.*} settings read as a layout, or refused with a message that names them. */
class ShardLayoutTest {

    record Shard(String url, Optional<String> username, Optional<String> password, Optional<List<String>> clients)
            implements LedgerConfig.Shard {
        static Shard of(String url, String... clients) {
            return new Shard(url, Optional.empty(), Optional.empty(), Optional.of(List.of(clients)));
        }
    }

    @Test
    void withoutShardsEveryClientIsOnTheDefaultShard() {
        ShardLayout layout = ShardLayout.of(Map.of());
        assertEquals("default", layout.shardOf("dev"));
        assertEquals("default", layout.shardOf("other"));
        assertTrue(layout.extra().isEmpty());
    }

    @Test
    void aClientNamedByAShardIsOnItAndTheOthersStayOnTheDefault() {
        ShardLayout layout = ShardLayout.of(Map.of(
                "eu2", Shard.of("postgresql://db2:5432/ledger", "globex", " initech"),
                "us1", Shard.of("postgres://db3/ledger", "acme")));
        assertEquals("eu2", layout.shardOf("globex"));
        assertEquals("eu2", layout.shardOf("initech"), "entries are trimmed");
        assertEquals("us1", layout.shardOf("acme"));
        assertEquals("default", layout.shardOf("dev"));
        assertEquals(List.of("eu2", "us1"), List.copyOf(layout.extra().keySet()));
    }

    @Test
    void aShardWithoutClientsHoldsNone() {
        ShardLayout layout = ShardLayout.of(Map.of("spare", new Shard("postgresql://db9/ledger", Optional.empty(),
                Optional.empty(), Optional.empty())));
        assertEquals("default", layout.shardOf("dev"));
        assertFalse(layout.extra().isEmpty());
    }

    @Test
    void refusesAClientNamedByTwoShards() {
        ConfigurationException refused = assertThrows(ConfigurationException.class, () -> ShardLayout.of(Map.of(
                "eu2", Shard.of("postgresql://db2/ledger", "globex", "initech"),
                "us1", Shard.of("postgresql://db3/ledger", "acme", "globex"))));
        assertTrue(refused.getMessage().contains("The client globex is named by two shards, ledger.shards.eu2.clients and "
                + "ledger.shards.us1.clients"), refused.getMessage());
    }

    @Test
    void refusesAShardNamedDefault() {
        ConfigurationException refused = assertThrows(ConfigurationException.class,
                () -> ShardLayout.of(Map.of("default", Shard.of("postgresql://db2/ledger", "globex"))));
        assertTrue(refused.getMessage().startsWith("ledger.shards.default is not a shard of its own"), refused.getMessage());
    }

    @Test
    void refusesAUrlThatIsNotReactive() {
        ConfigurationException refused = assertThrows(ConfigurationException.class,
                () -> ShardLayout.of(Map.of("eu2", Shard.of("jdbc:postgresql://db2/ledger", "globex"))));
        assertTrue(refused.getMessage().startsWith("ledger.shards.eu2.url must be a reactive URL"), refused.getMessage());
    }

    @Test
    void derivesFlywaysJdbcUrlFromTheReactiveOne() {
        assertEquals("jdbc:postgresql://db2:5432/ledger", ShardLayout.jdbcUrl("postgresql://db2:5432/ledger"));
        assertEquals("jdbc:postgresql://db2/ledger", ShardLayout.jdbcUrl("postgres://db2/ledger"));
        assertEquals("jdbc:postgresql://db2:5432/ledger?sslmode=require",
                ShardLayout.jdbcUrl("postgresql://user:p%40ss@db2:5432/ledger?sslmode=require"));
        assertEquals("jdbc:postgresql://db2/postgres?currentSchema=s1", ShardLayout.jdbcUrl("postgresql://db2/postgres?search_path=s1"));
    }

    @Test
    void readsTheShardsFromEnvironmentVariables() {
        SmallRyeConfig config = new SmallRyeConfigBuilder().withMapping(LedgerConfig.class)
                .withConverter(Duration.class, 100, new DurationConverter())
                .withSources(new EnvConfigSource(Map.of("LEDGER_SHARDS_EU2_URL", "postgresql://db2:5432/ledger",
                        "LEDGER_SHARDS_EU2_USERNAME", "ledger", "LEDGER_SHARDS_EU2_CLIENTS", "globex,initech"), 300))
                .build();
        LedgerConfig.Shard eu2 = config.getConfigMapping(LedgerConfig.class).shards().get("eu2");
        assertEquals("postgresql://db2:5432/ledger", eu2.url());
        assertEquals(Optional.of("ledger"), eu2.username());
        assertEquals(Optional.empty(), eu2.password());
        assertEquals(Optional.of(List.of("globex", "initech")), eu2.clients());
        assertEquals("eu2", ShardLayout.of(config.getConfigMapping(LedgerConfig.class).shards()).shardOf("initech"));
    }
}
