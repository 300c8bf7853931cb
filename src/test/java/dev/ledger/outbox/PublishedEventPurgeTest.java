package dev.ledger.outbox;

import dev.ledger.dependency.BatchedDelete;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

@QuarkusTest
class PublishedEventPurgeTest {
    private static final Duration RETENTION = Duration.ofDays(7);

    @Inject
    PublishedEventPurge purge;

    @Inject
    DataSource dataSource;

    private long count(String account) throws Exception {
        try (Connection db = dataSource.getConnection(); Statement sql = db.createStatement();
             ResultSet rows = sql.executeQuery("SELECT count(*) FROM outbox_events WHERE account_id = '" + account + "'")) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private void insertEvents(String account, int n, String publishedAt) throws Exception {
        try (Connection db = dataSource.getConnection(); Statement sql = db.createStatement()) {
            sql.execute("INSERT INTO outbox_events (type, account_id, created_at, published_at) "
                    + "SELECT 'account.opened', '" + account + "', now() - interval '30 days', " + publishedAt
                    + " FROM generate_series(1, " + n + ")");
        }
    }

    @Test
    void removesEventsPublishedBeforeTheRetentionInBoundedBatchesAndKeepsTheRest() throws Exception {
        String old = UUID.randomUUID().toString();
        String recent = UUID.randomUUID().toString();
        String unpublished = UUID.randomUUID().toString();
        insertEvents(old, 2500, "now() - interval '8 days'");
        insertEvents(recent, 3, "now() - interval '6 days'");
        insertEvents(unpublished, 3, "NULL"); // written 30 days ago, never published: never purged

        BatchedDelete.Result bounded = purge.purge(1000, 2, RETENTION).await().atMost(Duration.ofSeconds(30));
        assertEquals(2, bounded.batches());
        assertEquals(2000, bounded.rows());
        assertEquals(500, count(old));

        BatchedDelete.Result rest = purge.purge(1000, 100, RETENTION).await().atMost(Duration.ofSeconds(30));
        assertEquals(1, rest.batches()); // a short batch ends the run
        assertEquals(500, rest.rows());
        assertEquals(0, count(old));
        assertEquals(3, count(recent));
        assertEquals(3, count(unpublished));
    }
}
