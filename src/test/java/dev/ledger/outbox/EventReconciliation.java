package dev.ledger.outbox;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The events a tap received, reconciled with what PostgreSQL holds for some accounts. Expected: one
 * event per opened account and per applied transaction (a ledger entry). Counted:
 * <ul>
 *   <li>missing: a change with no event received;</li>
 *   <li>invented: an event for a change that is not in the database;</li>
 *   <li>duplicates: an event id received again from the relay (not a broker's redelivery to the tap);</li>
 *   <li>split: a change received under more than one event id (a consumer could not deduplicate it);</li>
 *   <li>altered: a duplicate whose body differs from the first copy's;</li>
 *   <li>malformed: {@code message_id} not the event id, routing key not the type, not JSON or not persistent;</li>
 *   <li>out of order: per account, the first copies not in commit order (account.opened, then the
 *       transactions by ascending sequence, which is the order they committed in).</li>
 * </ul>
 */
public final class EventReconciliation {
    public final int expected;
    public final int deliveries;
    public final int missing;
    public final int invented;
    public final int duplicates;
    public final int redelivered;
    public final int split;
    public final int altered;
    public final int malformed;
    public final int outOfOrder;

    private EventReconciliation(int expected, int deliveries, int missing, int invented, int duplicates, int redelivered,
                                int split, int altered, int malformed, int outOfOrder) {
        this.expected = expected;
        this.deliveries = deliveries;
        this.missing = missing;
        this.invented = invented;
        this.duplicates = duplicates;
        this.redelivered = redelivered;
        this.split = split;
        this.altered = altered;
        this.malformed = malformed;
        this.outOfOrder = outOfOrder;
    }

    public static EventReconciliation of(List<EventTap.Delivery> received, Connection db, Collection<String> accounts)
            throws Exception {
        Set<String> changes = changes(db, accounts);
        Set<String> accountIds = Set.copyOf(accounts);
        List<EventTap.Delivery> ours = received.stream().filter(d -> accountIds.contains(d.accountId())).toList();

        Map<String, EventTap.Delivery> firstById = new LinkedHashMap<>();
        Map<String, Set<String>> idsByChange = new HashMap<>();
        int duplicates = 0;
        int redelivered = 0;
        int altered = 0;
        int malformed = 0;
        for (EventTap.Delivery delivery : ours) {
            if (!delivery.eventId().equals(delivery.messageId()) || !delivery.type().equals(delivery.routingKey())
                    || !"application/json".equals(delivery.contentType()) || !Integer.valueOf(2).equals(delivery.deliveryMode())) {
                malformed++;
            }
            EventTap.Delivery first = firstById.putIfAbsent(delivery.eventId(), delivery);
            if (first != null) {
                if (delivery.redelivered()) {
                    redelivered++;
                } else {
                    duplicates++;
                }
                if (!first.raw().equals(delivery.raw())) {
                    altered++;
                }
            }
            idsByChange.computeIfAbsent(delivery.type() + " " + delivery.resourceId(), k -> new HashSet<>()).add(delivery.eventId());
        }
        int missing = (int) changes.stream().filter(change -> !idsByChange.containsKey(change)).count();
        int invented = (int) idsByChange.keySet().stream().filter(change -> !changes.contains(change)).count();
        int split = (int) idsByChange.values().stream().filter(ids -> ids.size() > 1).count();

        int outOfOrder = 0;
        Map<String, Long> lastSequence = new HashMap<>();
        for (EventTap.Delivery first : firstById.values()) {
            Long last = lastSequence.get(first.accountId());
            if (EventEnvelope.ACCOUNT_OPENED.equals(first.type())) {
                if (last != null) {
                    outOfOrder++;
                }
                lastSequence.put(first.accountId(), 0L);
            } else {
                long sequence = first.sequence();
                if (last == null || sequence <= last) {
                    outOfOrder++;
                }
                lastSequence.put(first.accountId(), sequence);
            }
        }
        return new EventReconciliation(changes.size(), ours.size(), missing, invented, duplicates, redelivered, split,
                altered, malformed, outOfOrder);
    }

    /** "type id" of every opened account among {@code accounts} and of every transaction applied to them. */
    private static Set<String> changes(Connection db, Collection<String> accounts) throws Exception {
        Set<String> changes = new HashSet<>();
        Array ids = db.createArrayOf("uuid", accounts.stream().map(UUID::fromString).toArray());
        try (PreparedStatement sql = db.prepareStatement("""
                SELECT 'account.opened', id FROM accounts WHERE id = ANY (?)
                UNION ALL
                SELECT 'transaction.applied', id FROM ledger_entries WHERE account_id = ANY (?)""")) {
            sql.setArray(1, ids);
            sql.setArray(2, ids);
            try (ResultSet rows = sql.executeQuery()) {
                while (rows.next()) {
                    changes.add(rows.getString(1) + " " + rows.getString(2));
                }
            }
        }
        return changes;
    }

    /** How many events wait to be published. */
    public static long unpublished(Connection db) throws Exception {
        try (PreparedStatement sql = db.prepareStatement("SELECT count(*) FROM outbox_events WHERE published_at IS NULL");
             ResultSet rows = sql.executeQuery()) {
            rows.next();
            return rows.getLong(1);
        }
    }

    /** The counts, for the test's output. */
    public String summary() {
        return String.format("expected %d events, %d deliveries: missing %d, invented %d, duplicates %d (equal ids, altered %d),"
                        + " changes under several ids %d, broker redeliveries to the tap %d, malformed %d, out of order %d",
                expected, deliveries, missing, invented, duplicates, altered, split, redelivered, malformed, outOfOrder);
    }

    /** Nothing missing, invented, split, altered, malformed or out of order (duplicates are for the caller to judge). */
    public boolean complete() {
        return missing == 0 && invented == 0 && split == 0 && altered == 0 && malformed == 0 && outOfOrder == 0;
    }
}
