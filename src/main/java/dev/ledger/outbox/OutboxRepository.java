package dev.ledger.outbox;

import dev.ledger.dependency.Postgres;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The outbox's queries: claiming one broker's undelivered events with what their bodies are rendered from,
 * marking them delivered, the age of a broker's backlog, the purge.
 */
@ApplicationScoped
public class OutboxRepository {
    /**
     * Claims a batch keeping each account's order with several relays at work, with each event's trace and
     * transfer: see {@code ledger_claim_deliveries} in V4, {@code ledger_claim_traced_deliveries} in V5 and
     * {@code ledger_claim_deliveries_with_transfers} in V7.
     */
    static final String CLAIM = "SELECT * FROM ledger_claim_deliveries_with_transfers($1, $2, $3)";
    /** The deliveries go; an event with none left is published: see {@code ledger_mark_delivered} in V4. */
    static final String MARK = "SELECT ledger_mark_delivered($1, $2)";
    static final String OLDEST = """
            SELECT o.created_at FROM outbox_deliveries d JOIN outbox_events o ON o.position = d.position
             WHERE d.destination = $1 ORDER BY d.position LIMIT 1""";
    /** The longest published first (outbox_events_published_idx); an unpublished event is never taken. */
    static final String PURGE_BATCH = """
            DELETE FROM outbox_events WHERE position = ANY (ARRAY (
                SELECT position FROM outbox_events WHERE published_at < now() - make_interval(secs => $2)
                ORDER BY published_at LIMIT $1 FOR UPDATE SKIP LOCKED))""";
    /** How many of the oldest unpublished events a claim looks at for heads, per event it may claim. */
    static final int WINDOW_PER_EVENT = 4;

    private final Postgres postgres;
    private final Map<String, EventData> data;

    public OutboxRepository(Postgres postgres, Instance<EventData> data) {
        this.postgres = postgres;
        this.data = data.stream().collect(Collectors.toUnmodifiableMap(EventData::type, Function.identity()));
    }

    /**
     * An unpublished event and its body, claimed in the transaction of {@code connection}; {@code traceParent}:
     * the trace of the request or command that wrote it, null when none was recorded.
     */
    public record PendingEvent(long position, EventEnvelope envelope, String traceParent) {
    }

    /**
     * Up to {@code batchSize} events not yet delivered to {@code destination}, in order per account, locked by this
     * transaction (on a connection of {@code shard}'s pool) until it ends.
     */
    public Uni<List<PendingEvent>> claim(Pool shard, SqlConnection connection, String destination, int batchSize) {
        return postgres.bounded(shard, () -> connection.preparedQuery(CLAIM)
                        .execute(Tuple.of(destination, batchSize, batchSize * WINDOW_PER_EVENT)))
                .map(rows -> {
                    List<PendingEvent> events = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        events.add(new PendingEvent(row.getLong("position"), envelope(row), row.getString("trace_parent")));
                    }
                    return events;
                });
    }

    private EventEnvelope envelope(Row row) {
        String type = row.getString("event_type");
        EventData renderer = data.get(type);
        if (renderer == null) {
            throw new IllegalStateException("Unknown event type " + type);
        }
        return new EventEnvelope(row.getUUID("event_id"), type, row.getOffsetDateTime("occurred_at").toInstant(),
                row.getString("owner"), row.getUUID("account_id"), renderer.render(row));
    }

    public Uni<Void> markDelivered(Pool shard, SqlConnection connection, String destination, List<Long> positions) {
        return postgres.bounded(shard, () -> connection.preparedQuery(MARK).execute(Tuple.of(destination, positions.toArray(Long[]::new))))
                .replaceWithVoid();
    }

    /** When the oldest event not yet delivered to {@code destination} from {@code shard} was written, or null when none waits. */
    public Uni<OffsetDateTime> oldestUndelivered(Pool shard, String destination) {
        return postgres.query(shard, OLDEST, Tuple.of(destination))
                .map(rows -> rows.size() == 0 ? null : rows.iterator().next().getOffsetDateTime("created_at"));
    }

    /** Deletes up to {@code batchSize} events of {@code shard} published longer than {@code retention} ago; answers how many. */
    public Uni<Integer> purgeBatch(Pool shard, int batchSize, Duration retention) {
        return postgres.query(shard, PURGE_BATCH, Tuple.of(batchSize, retention.toMillis() / 1000.0))
                .map(rows -> rows.rowCount());
    }
}
