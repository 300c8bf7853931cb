package dev.ledger.events;

import dev.ledger.account.AccountView;
import dev.ledger.database.DatabaseGuard;
import dev.ledger.transaction.TransactionView;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/** The outbox's queries: claiming unpublished events with what their bodies are rendered from, marking, the backlog's age, the purge. */
@ApplicationScoped
public class OutboxRepository {
    /**
     * Claims a batch, keeping each account's order with several relays at work. Only the oldest
     * unpublished event of an account (its head) is ever locked, {@code SKIP LOCKED}: a relay that
     * holds it owns the account's events until it commits, because the next event of the account is
     * not a head while this one is unpublished, and so no other relay can take it. The claim takes the
     * heads found among the oldest unpublished events ({@code $2} of them), then those accounts' events
     * in that window, in order (the window holds every earlier unpublished event of an account it
     * holds one of). Per account, positions are commit order (see V2__outbox.sql).
     */
    static final String CLAIM = """
            WITH pending AS MATERIALIZED (
                SELECT position, account_id FROM outbox_events
                 WHERE published_at IS NULL ORDER BY position LIMIT $2),
            heads AS MATERIALIZED (
                SELECT o.account_id FROM outbox_events o
                 WHERE o.position IN (SELECT min(p.position) FROM pending p GROUP BY p.account_id)
                   AND o.published_at IS NULL
                 ORDER BY o.position LIMIT $1
                   FOR UPDATE OF o SKIP LOCKED)
            SELECT o.position, o.event_id, o.type AS event_type, o.created_at AS occurred_at,
                   a.owner, a.id AS account_id, a.currency, a.created_at AS account_created_at,
                   e.id AS entry_id, e.type, e.amount, e.sequence, e.reference::text AS reference,
                   e.balance_after, e.created_at
              FROM pending p
              JOIN heads h ON h.account_id = p.account_id
              JOIN outbox_events o ON o.position = p.position
              JOIN accounts a ON a.id = o.account_id
              LEFT JOIN ledger_entries e ON e.id = o.entry_id
             ORDER BY p.position
             LIMIT $1""";
    static final String MARK = "UPDATE outbox_events SET published_at = now() WHERE position = ANY ($1)";
    static final String OLDEST = """
            SELECT created_at FROM outbox_events WHERE published_at IS NULL ORDER BY position LIMIT 1""";
    /** Oldest first by position (the primary key); an event published late is kept for its own retention. */
    static final String PURGE_BATCH = """
            DELETE FROM outbox_events WHERE position = ANY (ARRAY (
                SELECT position FROM outbox_events WHERE published_at < now() - make_interval(secs => $2)
                ORDER BY position LIMIT $1 FOR UPDATE SKIP LOCKED))""";
    /** How many of the oldest unpublished events a claim looks at for heads, per event it may claim. */
    static final int WINDOW_PER_EVENT = 10;

    private final Pool pool;
    private final DatabaseGuard guard;

    public OutboxRepository(Pool pool, DatabaseGuard guard) {
        this.pool = pool;
        this.guard = guard;
    }

    /** An unpublished event and its body, claimed in the transaction of {@code connection}. */
    public record PendingEvent(long position, EventEnvelope envelope) {
    }

    /** Up to {@code batchSize} events, in order per account, locked by this transaction until it ends. */
    public Uni<List<PendingEvent>> claim(SqlConnection connection, int batchSize) {
        return guard.bounded(() -> connection.preparedQuery(CLAIM).execute(Tuple.of(batchSize, batchSize * WINDOW_PER_EVENT)))
                .map(rows -> {
                    List<PendingEvent> events = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        events.add(new PendingEvent(row.getLong("position"), envelope(row)));
                    }
                    return events;
                });
    }

    private static EventEnvelope envelope(Row row) {
        String type = row.getString("event_type");
        Object data = switch (type) {
            case EventEnvelope.TRANSACTION_APPLIED -> TransactionView.of(row);
            case EventEnvelope.ACCOUNT_OPENED -> AccountView.opened(row.getUUID("account_id"), row.getString("currency"),
                    row.getOffsetDateTime("account_created_at").toInstant());
            default -> throw new IllegalStateException("Unknown event type " + type);
        };
        return new EventEnvelope(row.getUUID("event_id"), type, row.getOffsetDateTime("occurred_at").toInstant(),
                row.getString("owner"), row.getUUID("account_id"), data);
    }

    public Uni<Void> markPublished(SqlConnection connection, List<Long> positions) {
        return guard.bounded(() -> connection.preparedQuery(MARK).execute(Tuple.of(positions.toArray(Long[]::new))))
                .replaceWithVoid();
    }

    /** When the oldest unpublished event was written, or null when every event is published. */
    public Uni<OffsetDateTime> oldestUnpublished() {
        return guard.bounded(() -> pool.preparedQuery(OLDEST).execute())
                .map(rows -> rows.size() == 0 ? null : rows.iterator().next().getOffsetDateTime("created_at"));
    }

    /** Deletes up to {@code batchSize} events published longer than {@code retention} ago; answers how many. */
    public Uni<Integer> purgeBatch(int batchSize, Duration retention) {
        return pool.preparedQuery(PURGE_BATCH).execute(Tuple.of(batchSize, retention.toMillis() / 1000.0))
                .map(rows -> rows.rowCount());
    }
}
