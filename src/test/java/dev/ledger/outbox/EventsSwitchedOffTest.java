package dev.ledger.outbox;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newAccount;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The default: events switched off. The request path writes no event and no relay runs. */
@QuarkusTest
class EventsSwitchedOffTest {
    @Inject
    DataSource dataSource;

    @Test
    void writesNoEventAndPublishesNothing() throws Exception {
        String account = newAccount();
        credit(account, 100, 1);
        credit(account, 100, 2);
        try (Connection db = dataSource.getConnection(); Statement sql = db.createStatement();
             ResultSet rows = sql.executeQuery("SELECT count(*) FROM outbox_events")) {
            rows.next();
            assertEquals(0, rows.getLong(1));
        }
        // no relay runs, so none registers its metrics (-1: absent)
        assertEquals(-1.0, OutboxTest.metric("ledger_events_published_total"));
    }
}
