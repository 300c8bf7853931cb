package dev.ledger.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;

/** What PostgreSQL itself must agree with, whatever a test did to the service. */
public final class LedgerChecks {
    private LedgerChecks() {
    }

    /**
     * What disagrees among {@code accounts} in {@code db}: an account whose entries do not add up to its balance, whose
     * pending amounts are not its holds still pending, or whose balance is below 0; a posted transfer without its two
     * legs of its posted amount (or a transfer not posted with any entry); a transfer whose reversals do not add up to
     * its reversed amount. Empty when all agree.
     */
    public static List<String> disagreements(Connection db, Collection<String> accounts) throws SQLException {
        List<String> found = new ArrayList<>();
        for (String id : accounts) {
            try (PreparedStatement sql = db.prepareStatement("""
                    SELECT a.balance, a.pending_debits, a.pending_credits,
                           (SELECT coalesce(sum(CASE e.type WHEN 'CREDIT' THEN e.amount ELSE -e.amount END), 0)
                              FROM ledger_entries e WHERE e.account_id = a.id) AS entries,
                           (SELECT coalesce(sum(t.amount), 0) FROM transfers t
                             WHERE t.debit_account_id = a.id AND t.status = 'pending') AS holds_out,
                           (SELECT coalesce(sum(t.amount), 0) FROM transfers t
                             WHERE t.credit_account_id = a.id AND t.status = 'pending') AS holds_in
                      FROM accounts a WHERE a.id = ?""")) {
                sql.setObject(1, UUID.fromString(id));
                try (ResultSet row = sql.executeQuery()) {
                    if (!row.next()) {
                        found.add(id + ": no such account");
                        continue;
                    }
                    if (row.getLong("entries") != row.getLong("balance") || row.getLong("balance") < 0
                            || row.getLong("pending_debits") != row.getLong("holds_out")
                            || row.getLong("pending_credits") != row.getLong("holds_in")) {
                        found.add(id + ": balance " + row.getLong("balance") + ", entries " + row.getLong("entries")
                                + ", pending " + row.getLong("pending_debits") + "/" + row.getLong("pending_credits")
                                + ", holds " + row.getLong("holds_out") + "/" + row.getLong("holds_in"));
                    }
                }
            }
        }
        List<UUID> all = accounts.stream().map(UUID::fromString).toList();
        try (PreparedStatement sql = db.prepareStatement("""
                SELECT t.id, t.status, t.posted_amount, t.reversed_amount,
                       (SELECT count(*) FROM ledger_entries e WHERE e.transfer_id = t.id AND e.amount = t.posted_amount
                           AND ((e.type = 'DEBIT' AND e.account_id = t.debit_account_id)
                             OR (e.type = 'CREDIT' AND e.account_id = t.credit_account_id))) AS legs,
                       (SELECT count(*) FROM ledger_entries e WHERE e.transfer_id = t.id) AS entries,
                       (SELECT coalesce(sum(r.amount), 0) FROM transfers r WHERE r.reversal_of = t.id) AS reversed
                  FROM transfers t WHERE t.debit_account_id = ANY (?)""")) {
            sql.setArray(1, db.createArrayOf("uuid", all.toArray()));
            try (ResultSet row = sql.executeQuery()) {
                while (row.next()) {
                    long expectedLegs = row.getString("status").equals("posted") ? 2 : 0;
                    if (row.getLong("legs") != expectedLegs || row.getLong("entries") != expectedLegs
                            || row.getLong("reversed") != row.getLong("reversed_amount")) {
                        found.add("transfer " + row.getString("id") + " " + row.getString("status") + ": legs "
                                + row.getLong("legs") + " of " + row.getLong("entries") + " entries, reversed "
                                + row.getLong("reversed") + " of " + row.getLong("reversed_amount"));
                    }
                }
            }
        }
        return found;
    }
}
