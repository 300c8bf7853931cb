package dev.ledger.shard;

import dev.ledger.config.LedgerConfig;
import io.quarkus.runtime.configuration.ConfigurationException;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which shard holds which client, as the {@code ledger.shards.*} settings say, checked: every client on one shard
 * at most, every shard reachable by a reactive URL. A client no shard names is on {@link #DEFAULT}, the standard
 * {@code quarkus.datasource.*}. Pure: the settings in, the layout or a {@link ConfigurationException} out.
 */
public final class ShardLayout {
    /** The shard of {@code quarkus.datasource.*}: every client no other shard names. */
    public static final String DEFAULT = "default";

    private final Map<String, LedgerConfig.Shard> extra;
    private final Map<String, String> shardOfClient;

    private ShardLayout(Map<String, LedgerConfig.Shard> extra, Map<String, String> shardOfClient) {
        this.extra = extra;
        this.shardOfClient = shardOfClient;
    }

    /** The layout of these shards (by name); refuses, naming the settings, what cannot be served. */
    public static ShardLayout of(Map<String, ? extends LedgerConfig.Shard> shards) {
        Map<String, LedgerConfig.Shard> extra = new TreeMap<>(shards);
        Map<String, String> shardOfClient = new TreeMap<>();
        for (Map.Entry<String, LedgerConfig.Shard> shard : extra.entrySet()) {
            String name = shard.getKey();
            if (DEFAULT.equals(name)) {
                throw new ConfigurationException("ledger.shards.default is not a shard of its own: the shard default is "
                        + "quarkus.datasource.*, which holds every client no other shard names; give the shard another name");
            }
            String url = shard.getValue().url().trim();
            if (!url.startsWith("postgresql://") && !url.startsWith("postgres://")) {
                throw new ConfigurationException("ledger.shards." + name + ".url must be a reactive URL, postgresql://host:5432/db");
            }
            for (String client : shard.getValue().clients().orElse(List.of())) {
                String id = client.trim();
                if (id.isEmpty()) {
                    continue;
                }
                String before = shardOfClient.putIfAbsent(id, name);
                if (before != null) {
                    throw new ConfigurationException("The client " + id + " is named by two shards, ledger.shards." + before
                            + ".clients and ledger.shards." + name + ".clients: a client's data live on one shard; name it in one");
                }
            }
        }
        return new ShardLayout(Collections.unmodifiableMap(extra), Collections.unmodifiableMap(shardOfClient));
    }

    /** The name of the shard that holds {@code client}'s data. */
    public String shardOf(String client) {
        return shardOfClient.getOrDefault(client, DEFAULT);
    }

    /** The shards besides {@link #DEFAULT}, by name (none when no {@code ledger.shards.*} is set). */
    public Map<String, LedgerConfig.Shard> extra() {
        return extra;
    }

    /**
     * The JDBC URL (for Flyway) of the database a reactive URL names: {@code jdbc:postgresql://host:5432/db?...}, without
     * the user and password (JDBC takes them apart), and the reactive client's {@code search_path} as JDBC's
     * {@code currentSchema}.
     */
    public static String jdbcUrl(String reactiveUrl) {
        String rest = reactiveUrl.trim().substring(reactiveUrl.trim().indexOf("://") + 3);
        int path = rest.indexOf('/') < 0 ? rest.length() : rest.indexOf('/');
        int at = rest.lastIndexOf('@', path);
        return "jdbc:postgresql://" + rest.substring(at + 1).replace("search_path=", "currentSchema=");
    }
}
