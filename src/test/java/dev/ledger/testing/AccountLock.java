package dev.ledger.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * Holds an account's row lock from a connection of the test's own (the application's database that holds it,
 * {@code quarkus.datasource.jdbc.url} or a shard's), so that a POST to it stays in flight, blocked inside
 * Postgres, until {@link #close()} commits: a slow original on demand, without sleeps.
 */
public final class AccountLock implements AutoCloseable {
    private final Connection connection;

    private AccountLock(Connection connection) {
        this.connection = connection;
    }

    /** On whichever of the application's databases (shards) holds the account. */
    public static AccountLock hold(String accountId) throws SQLException {
        AccountLock held = null;
        for (Connection connection : Sql.connectEverywhere()) {
            if (held == null) {
                connection.setAutoCommit(false);
                try (PreparedStatement lock = connection.prepareStatement("SELECT 1 FROM accounts WHERE id = ? FOR UPDATE")) {
                    lock.setObject(1, UUID.fromString(accountId));
                    try (ResultSet row = lock.executeQuery()) {
                        if (row.next()) {
                            held = new AccountLock(connection);
                            continue;
                        }
                    }
                }
            }
            connection.close();
        }
        if (held == null) {
            throw new IllegalArgumentException("no account " + accountId);
        }
        return held;
    }

    /** Cancels the statements waiting for this lock (as an operator's pg_cancel_backend would); answers how many. */
    public int cancelWaiters() throws SQLException {
        try (Statement sql = connection.createStatement();
             ResultSet cancelled = freshActivity(sql).executeQuery("SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM pg_stat_activity "
                     + "WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND query ILIKE '%ledger_post_transaction%'")) {
            cancelled.next();
            return cancelled.getInt(1);
        }
    }

    /** How many statements wait for this lock now. */
    public int waiters() throws SQLException {
        try (Statement sql = connection.createStatement();
             ResultSet waiting = freshActivity(sql).executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                     + "AND pid <> pg_backend_pid() AND query ILIKE '%ledger_post_transaction%'")) {
            waiting.next();
            return waiting.getInt(1);
        }
    }

    /**
     * {@code sql}, after dropping this transaction's snapshot of the statistics views: the connection
     * holds the lock in a transaction, and PostgreSQL answers every read of {@code pg_stat_activity}
     * in a transaction from the snapshot its first read took, so a look taken before the statement
     * arrived would never see it arrive.
     */
    private static Statement freshActivity(Statement sql) throws SQLException {
        sql.execute("SELECT pg_stat_clear_snapshot()");
        return sql;
    }

    @Override
    public void close() throws SQLException {
        try {
            connection.commit();
        } finally {
            connection.close();
        }
    }
}
