package dev.ledger.testing;

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

    /** Runs one statement in a connection of its own. */
    public static void execute(String statement) throws SQLException {
        try (Connection db = connect(); Statement sql = db.createStatement()) {
            sql.execute(statement);
        }
    }
}
