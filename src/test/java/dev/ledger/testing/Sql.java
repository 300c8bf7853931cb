package dev.ledger.testing;

import java.util.ArrayList;
import java.util.List;

import org.eclipse.microprofile.config.ConfigProvider;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** A connection of the test's own to the application's database ({@code quarkus.datasource.jdbc.url}). */
public final class Sql {
    private Sql() {
    }

    public static Connection connect() throws SQLException {
        var config = ConfigProvider.getConfig();
        return DriverManager.getConnection(config.getValue("quarkus.datasource.jdbc.url", String.class),
                config.getOptionalValue("quarkus.datasource.username", String.class).orElse("postgres"),
                config.getOptionalValue("quarkus.datasource.password", String.class).orElse(""));
    }

    /** A connection to the database of the shard that holds {@code client} ({@code ledger.shards.<name>.clients}), or the default's. */
    public static Connection connectFor(String client) throws SQLException {
        var config = ConfigProvider.getConfig();
        for (String name : config.getPropertyNames()) {
            if (name.startsWith("ledger.shards.") && name.endsWith(".clients")
                    && List.of(config.getValue(name, String.class).split(",")).contains(client)) {
                String shard = name.substring("ledger.shards.".length(), name.length() - ".clients".length());
                return connectToShard(shard);
            }
        }
        return connect();
    }

    private static Connection connectToShard(String shard) throws SQLException {
        var config = ConfigProvider.getConfig();
        String url = config.getValue("ledger.shards." + shard + ".url", String.class);
        return DriverManager.getConnection("jdbc:postgresql://" + url.substring(url.indexOf("://") + 3),
                config.getOptionalValue("ledger.shards." + shard + ".username", String.class).orElse("postgres"), "");
    }

    /**
     * A connection to each database of the application: the default shard's first, then each {@code ledger.shards.<name>}
     * one's (its reactive URL in JDBC form), for a test that looks for a row wherever its client lives.
     */
    public static List<Connection> connectEverywhere() throws SQLException {
        var config = ConfigProvider.getConfig();
        List<Connection> connections = new ArrayList<>();
        connections.add(connect());
        for (String name : config.getPropertyNames()) {
            if (name.startsWith("ledger.shards.") && name.endsWith(".url")) {
                connections.add(connectToShard(name.substring("ledger.shards.".length(), name.length() - ".url".length())));
            }
        }
        return connections;
    }

    /** Runs one statement in a connection of its own. */
    public static void execute(String statement) throws SQLException {
        try (Connection db = connect(); Statement sql = db.createStatement()) {
            sql.execute(statement);
        }
    }
}
