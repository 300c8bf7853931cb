package dev.ledger.transfer;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ledger.testing.LedgerApi.account;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.getTransfer;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.settle;
import static dev.ledger.testing.LedgerApi.transaction;
import static dev.ledger.testing.LedgerApi.transfer;
import static dev.ledger.testing.LedgerApi.transferBody;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A hold expires at its time whatever the expiry job does: while the test holds the hold's row lock (the job skips
 * locked rows), a hold past its expiry is shown expired, counts as released for available (a debit may take its
 * amount) and refuses its post, which releases it; nothing else has touched its row until then. In the default
 * profile, the job running every second: it cannot take a row the test holds, and the post, queued for the lock
 * first, has it when the test lets go.
 */
@QuarkusTest
class ExpiryByTimeTest {
    @Inject
    DataSource dataSource;

    @Test
    void aHoldPastItsExpiryIsExpiredBeforeAnythingReleasesIt() throws Exception {
        String debit = newAccount();
        credit(debit, 1000, 1);
        String credit = newAccount();
        Response hold = transfer(transferBody(debit, credit, 600, "\"pending\":true,\"timeoutSeconds\":1"));
        assertEquals(201, hold.statusCode(), hold.asString());
        String id = hold.path("id");

        try (Connection lock = dataSource.getConnection()) {
            // taken within the hold's second, before the job may release it
            lock.setAutoCommit(false);
            assertEquals("pending", value(lock, "SELECT status FROM transfers WHERE id = ? FOR NO KEY UPDATE", id));

            await().atMost(Duration.ofSeconds(10)).until(() -> "expired".equals(getTransfer(id).path("status")));
            assertEquals("pending", stored(id), "nothing released it yet");
            assertEquals(600, storedPendingDebits(debit));
            Response account = account(debit);
            assertEquals(0, (int) account.path("pendingDebits"));
            assertEquals(1000, (int) account.path("available"));
            assertEquals(0, (int) account(credit).path("pendingCredits"));
            // its amount is available again: a debit may take it, though the row still counts it
            Response debitOfAll = postTransaction(debit, newKey(), transaction("DEBIT", 1000, 2));
            assertEquals(201, debitOfAll.statusCode(), debitOfAll.asString());
            assertEquals("pending", stored(id), "nothing released it yet");

            CompletableFuture<Response> posting = CompletableFuture.supplyAsync(() -> settle(id, "post", "{}"));
            await().atMost(Duration.ofSeconds(10)).until(() -> postWaitsForTheLock() || posting.isDone());
            lock.commit();
            Response post = posting.get(30, TimeUnit.SECONDS);
            assertEquals(409, post.statusCode(), post.asString());
            assertEquals("/problems/transfer-expired", post.path("type"));
        }
        assertEquals("expired", stored(id), "the refused post released it");
        assertEquals(0, storedPendingDebits(debit));
        assertEquals(409, settle(id, "void", "{}").statusCode());
        assertEquals(0, (int) account(debit).path("balance"));
        assertEquals(0, (int) account(credit).path("balance"));
    }

    /** Whether a post of a transfer waits for a row lock in PostgreSQL now. */
    private boolean postWaitsForTheLock() throws Exception {
        try (Connection db = dataSource.getConnection(); PreparedStatement sql = db.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%ledger_post_transfer%'");
             ResultSet rows = sql.executeQuery()) {
            rows.next();
            return rows.getLong(1) > 0;
        }
    }

    private String stored(String transfer) throws Exception {
        return (String) value("SELECT status FROM transfers WHERE id = ?", transfer);
    }

    private long storedPendingDebits(String account) throws Exception {
        return ((Number) value("SELECT pending_debits FROM accounts WHERE id = ?", account)).longValue();
    }

    private Object value(String query, String id) throws Exception {
        try (Connection db = dataSource.getConnection()) {
            return value(db, query, id);
        }
    }

    private static Object value(Connection db, String query, String id) throws Exception {
        try (PreparedStatement sql = db.prepareStatement(query)) {
            sql.setObject(1, UUID.fromString(id));
            try (ResultSet rows = sql.executeQuery()) {
                rows.next();
                return rows.getObject(1);
            }
        }
    }
}
