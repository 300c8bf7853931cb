package dev.ledger.idempotency;

import dev.ledger.dependency.BatchedDelete;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

@QuarkusTest
class ExpiredRecordPurgeTest {
    @Inject
    ExpiredRecordPurge purge;

    @Inject
    DataSource dataSource;

    @Inject
    RedisDataSource redis;

    private long count(String where) throws Exception {
        try (Connection db = dataSource.getConnection(); Statement sql = db.createStatement();
             ResultSet rows = sql.executeQuery("SELECT count(*) FROM idempotency_records WHERE " + where)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private void insertRecords(String client, int n, String expiresAt) throws Exception {
        try (Connection db = dataSource.getConnection(); Statement sql = db.createStatement()) {
            sql.execute("INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, expires_at) "
                    + "SELECT '" + client + "', sha256(('" + client + "' || g)::bytea), '\\x00', 'ACCOUNT_NOT_FOUND', "
                    + expiresAt + " FROM generate_series(1, " + n + ") g");
        }
    }

    @Test
    void removesExpiredRecordsInBoundedBatchesAndKeepsLiveOnes() throws Exception {
        String client = "purge-" + UUID.randomUUID();
        insertRecords(client, 2500, "now() - interval '1 hour'");
        insertRecords(client + "-live", 3, "now() + interval '1 hour'");

        BatchedDelete.Result bounded = purge.purge(1000, 2).await().atMost(Duration.ofSeconds(30));
        assertEquals(2, bounded.batches());
        assertEquals(2000, bounded.rows());
        assertEquals(500, count("client = '" + client + "'"));

        BatchedDelete.Result rest = purge.purge(1000, 100).await().atMost(Duration.ofSeconds(30));
        assertEquals(1, rest.batches()); // a short batch ends the run
        assertEquals(500, rest.rows());
        assertEquals(0, count("client = '" + client + "'"));
        assertEquals(3, count("client = '" + client + "-live'"));
        assertEquals(0, count("expires_at < now()"));
    }

    @Test
    void aPurgedKeyExecutesAfresh() throws Exception {
        String key = newKey();
        Response first = openAccount(key, "EUR");
        try (Connection db = dataSource.getConnection();
             PreparedStatement expire = db.prepareStatement(
                     "UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE resource_id = ?")) {
            expire.setObject(1, UUID.fromString(first.path("id")));
            assertEquals(1, expire.executeUpdate());
        }
        redis.execute("FLUSHDB"); // Redis expired it too
        purge.purge(1000, 100).await().atMost(Duration.ofSeconds(30));

        Response again = openAccount(key, "USD"); // would be 422 key-reused while the record lived
        assertEquals(201, again.statusCode(), again.asString());
        assertNull(again.header("Idempotent-Replayed"));
        assertEquals("USD", again.path("currency"));
    }
}
