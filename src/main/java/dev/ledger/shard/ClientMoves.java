package dev.ledger.shard;

import dev.ledger.config.LedgerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgException;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Moves a client's data from its shard to another (docs/operations.md, "Moving a client to another shard"), in four
 * steps, each safe to run again:
 * <ol>
 *   <li><b>Fence</b> the client on its shard ({@code client_fences}, V8): from its commit nothing of the client is
 *   applied there, by any instance, whatever that instance believes about where the client lives; the fence waits for
 *   the client's statements already past it. The client's requests answer 503 with {@code Retry-After} from here, its
 *   commands wait. Other clients are untouched.</li>
 *   <li><b>Copy</b> its accounts, entries, transfers, idempotency records and unpublished events to the target, in one
 *   transaction there that first deletes what an earlier stay left; the events leave the old shard's outbox in the
 *   same step (their rows locked meanwhile, so that its relay does not publish them too).</li>
 *   <li><b>Switch</b>: {@code client_placements} on the shard {@code default} names the target; this instance routes
 *   there at once, every other at its next read ({@code ledger.moves.refresh}) or at its first meeting the fence.</li>
 *   <li><b>Clean</b> the old shard, once every instance has read the switch: the client's rows go; the fence stays.</li>
 * </ol>
 * A failure before the switch takes the fence down again (the client stays where it was, nothing changed); a switch
 * whose outcome is unknown keeps it up, and the move is run again. The pause is bounded ({@code ledger.moves.max-pause}):
 * each statement from the fence to the target's commit may take only what is left of it, and a copy not done in time is
 * rolled back on both sides. Each move that reached the client's shard is counted and timed from there, the client's
 * pause at most ({@code ledger_client_moves_seconds},
 * tagged {@code result}: {@code moved}, {@code refused} when it gave up in time or for a lock, {@code failed}).
 */
@ApplicationScoped
public class ClientMoves {
    private static final Logger LOG = Logger.getLogger(ClientMoves.class);

    private static final String FENCE = """
            INSERT INTO client_fences (client, moved_to) VALUES ($1, $2)
            ON CONFLICT (client) DO UPDATE SET moved_to = EXCLUDED.moved_to, fenced_at = now()""";
    private static final String OF_CLIENT = "(SELECT a.id FROM accounts a WHERE a.owner = $1)";
    /** The client's tables, the parents first, each with the query of the client's rows in it, as JSON. */
    private record Table(String name, String where) {
        String rows() {
            return "SELECT coalesce(json_agg(x), '[]')::text FROM " + name + " x WHERE " + where;
        }
    }

    private static final List<Table> PARENTS_FIRST = List.of(
            new Table("accounts", "x.owner = $1"),
            new Table("transfers", "x.owner = $1"),
            new Table("ledger_entries", "x.account_id IN " + OF_CLIENT),
            new Table("idempotency_records", "x.client = $1"));
    /** The client's unpublished events and their deliveries, locked: the old shard's relay skips them until the move ends. */
    private static final String UNPUBLISHED = """
            WITH locked AS (SELECT d.* FROM outbox_deliveries d WHERE d.account_id IN %s FOR UPDATE)
            SELECT coalesce((SELECT json_agg(l) FROM locked l), '[]')::text,
                   coalesce((SELECT json_agg(o ORDER BY o.position) FROM outbox_events o
                              WHERE o.position IN (SELECT l.position FROM locked l)), '[]')::text,
                   ARRAY(SELECT DISTINCT l.position FROM locked l)""".formatted(OF_CLIENT);
    private static final String EVENT_COLUMNS = """
            SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
             WHERE attrelid = 'outbox_events'::regclass AND attnum > 0 AND NOT attisdropped AND attname <> 'position'""";
    /** Events in their old order under new positions (the target's), and their deliveries. */
    private static final String INSERT_EVENTS = """
            WITH src AS (SELECT * FROM json_populate_recordset(NULL::outbox_events, $1::text::json)),
                 ins AS (INSERT INTO outbox_events (%1$s) SELECT %1$s FROM src ORDER BY src.position
                         RETURNING outbox_events.position, outbox_events.event_id)
            INSERT INTO outbox_deliveries (destination, position, account_id)
            SELECT d.destination, ins.position, d.account_id
              FROM json_populate_recordset(NULL::outbox_deliveries, $2::text::json) d
              JOIN src ON src.position = d.position JOIN ins ON ins.event_id = src.event_id""";
    /** The client's rows, children first: what an earlier stay on the target left, and the old shard's after the move. */
    private static final List<String> DELETE = List.of(
            "DELETE FROM ledger_entries WHERE account_id IN " + OF_CLIENT,
            "DELETE FROM transfers WHERE owner = $1",
            "DELETE FROM idempotency_records WHERE client = $1",
            "DELETE FROM accounts WHERE owner = $1");

    private final Shards shards;
    /** {@code SET LOCAL lock_timeout} of the move's transactions on the old shard ({@code ledger.moves.lock-wait}). */
    private final String lockWait;
    /** How long the old shard keeps the client's rows after the switch: every instance has read the switch by then. */
    private final Duration cleanAfter;
    /** The longest pause, in nanoseconds ({@code ledger.moves.max-pause}). */
    private final long maxPause;
    private final MeterRegistry metrics;

    public ClientMoves(Shards shards, LedgerConfig config, MeterRegistry metrics) {
        this.shards = shards;
        this.cleanAfter = config.moves().refresh().multipliedBy(2);
        this.lockWait = "SET LOCAL lock_timeout = " + Math.max(1, config.moves().lockWait().toMillis());
        this.maxPause = config.moves().maxPause().toNanos();
        this.metrics = metrics;
    }

    /** A move not made: {@code retry} when it may succeed later (a lock not granted in time), a wrong request otherwise. */
    public static final class Refused extends RuntimeException {
        private final boolean retry;

        Refused(boolean retry, String message) {
            super(message, null, false, false);
            this.retry = retry;
        }

        public boolean retry() {
            return retry;
        }
    }

    /** What a move did: the rows it copied, and how long the client paused (its fence up until the switch). */
    public record Moved(String client, String from, String to, boolean moved, long accounts, long transfers, long entries,
                        long records, long events, long pauseMillis) {
    }

    /**
     * Moves {@code client} to the shard {@code to}; a client there already is left as it is ({@code moved} false).
     * One move of a client at a time, whichever instance runs it: each holds the client's move lock on the shard
     * {@code default} from its reading where the client is to its switch, which commits with the lock's release.
     */
    public Uni<Moved> move(String client, String to) {
        Pool target = shards.named(to).orElseThrow(() -> new Refused(false,
                "No shard is named '" + to + "': the shards are " + String.join(", ", shards.all().keySet())));
        if (!shards.migrated(to)) {
            throw new Refused(true, "The shard " + to + " was down at start and is not migrated yet; try again once it is");
        }
        Pool directory = shards.named(ShardLayout.DEFAULT).orElseThrow();
        return directory.withTransaction(moves -> run(moves, "SELECT pg_advisory_xact_lock(ledger_client_lock_key('move:' || $1))",
                        Tuple.of(client))
                .chain(() -> moves.preparedQuery("SELECT shard FROM client_placements WHERE client = $1").execute(Tuple.of(client)))
                .chain(placed -> {
                    String from = placed.size() > 0 ? placed.iterator().next().getString(0) : shards.configuredShardOf(client);
                    if (from.equals(to)) {
                        return Uni.createFrom().item(new Moved(client, from, to, false, 0, 0, 0, 0, 0, 0));
                    }
                    Pool source = shards.named(from).orElseThrow(() -> new Refused(false,
                            "The client " + client + " is on the shard " + from + ", which this instance does not have"));
                    LOG.infof("Moving client %s from the shard %s to %s: fencing it on %s", client, from, to, from);
                    long started = System.nanoTime();
                    return source.withTransaction(connection -> connection.query(lockWait).execute()
                                    .chain(() -> run(connection, "SELECT pg_advisory_xact_lock(ledger_client_lock_key($1))",
                                            Tuple.of(client)))
                                    .chain(() -> run(connection, FENCE, Tuple.of(client, to))))
                            .chain(() -> copy(source, target, client, started))
                            .chain(copied -> run(moves, """
                                    INSERT INTO client_placements (client, shard) VALUES ($1, $2)
                                    ON CONFLICT (client) DO UPDATE SET shard = EXCLUDED.shard, moved_at = now()""",
                                    Tuple.of(client, to)).replaceWith(copied))
                            .onFailure().call(failure -> {
                                LOG.errorf("The move of client %s to %s failed before its switch (%s); the client stays on "
                                        + "%s, its fence taken down", client, to, failure.toString(), from);
                                return source.preparedQuery("DELETE FROM client_fences WHERE client = $1").execute(Tuple.of(client))
                                        .onFailure().invoke(unfenced -> LOG.errorf("The fence of client %s on %s could not "
                                                + "be taken down (%s): run the move again", client, from, unfenced.toString()))
                                        .onFailure().recoverWithNull();
                            })
                            .map(copied -> new Moved(client, from, to, true, copied[0], copied[1], copied[2], copied[3],
                                    copied[4], (System.nanoTime() - started) / 1_000_000))
                            .onFailure(ClientMoves::lockNotGranted).transform(failure -> new Refused(true, "The move of "
                                    + client + " gave up: a lock on the shard " + from + " was not granted within "
                                    + "ledger.moves.lock-wait; the client stays there. Try again"))
                            .onFailure(ClientMoves::overran).transform(failure -> new Refused(false, "The move of " + client
                                    + " gave up: its copy to " + to + " did not finish within ledger.moves.max-pause ("
                                    + Duration.ofNanos(maxPause).toMillis() + " ms), the longest the client may pause; it "
                                    + "stays on " + from + ", served as before. Move it at a quieter hour or with a larger "
                                    + "ledger.moves.max-pause"))
                            .onItemOrFailure().invoke((moved, failure) -> paused(started, failure == null ? "moved"
                                    : failure instanceof Refused ? "refused" : "failed"));
                }))
                // committed: the switch is made (a commit that failed took the fence down above only when it was refused
                // before; one whose outcome is unknown leaves it up, and the move is run again)
                .invoke(moved -> {
                    if (!moved.moved()) {
                        return;
                    }
                    shards.placed(client, to);
                    LOG.infof("Client %s moved from the shard %s to %s: %d accounts, %d transfers, %d entries, %d records, "
                                    + "%d unpublished events; paused %d ms. Its rows there go in %d ms", client, moved.from(),
                            to, moved.accounts(), moved.transfers(), moved.entries(), moved.records(), moved.events(),
                            moved.pauseMillis(), cleanAfter.toMillis());
                    clean(moved.from(), client).subscribe().with(ignored -> { });
                });
    }

    /**
     * The client's rows on the shard it left, deleted once every instance has read the switch (twice
     * {@code ledger.moves.refresh}), so that an instance that has not yet read it, which still reads there, finds the
     * client as it was at the fence rather than not at all; the fence stays. Nothing is deleted if the client came
     * back meanwhile (a move back takes the fence down in the transaction that copies the client there).
     */
    private Uni<Void> clean(String shard, String client) {
        return Uni.createFrom().voidItem().onItem().delayIt().by(cleanAfter)
                // only while the client is still fenced there: it may have moved back meanwhile (the fence then gone)
                .chain(() -> shards.named(shard).orElseThrow().withTransaction(connection -> connection
                        .preparedQuery("SELECT 1 FROM client_fences WHERE client = $1 FOR UPDATE").execute(Tuple.of(client))
                        .chain(fenced -> fenced.size() == 0 ? Uni.createFrom().item(false)
                                : deleteAll(connection, client).replaceWith(true))))
                .invoke(deleted -> LOG.infof(deleted ? "Client %s's rows on the shard %s, which it left, are deleted; its fence stays"
                        : "Client %s is back on the shard %s: nothing of it deleted there", client, shard))
                .replaceWithVoid()
                .onFailure().invoke(failure -> LOG.warnf("Client %s's rows on the shard %s, which it left, stay there, fenced (%s)",
                        client, shard, failure.toString()))
                .onFailure().recoverWithNull();
    }

    /**
     * Copies the client's rows to the target in one transaction there, within one on the source that holds its
     * unpublished events' rows and deletes them once the target committed. Counts: accounts, transfers, entries,
     * records, events.
     */
    private Uni<long[]> copy(Pool source, Pool target, String client, long started) {
        return source.withTransaction(from -> from.query(lockWait).execute()
                .chain(() -> from.query(statementTimeout(started)).execute())
                .chain(() -> from.preparedQuery(UNPUBLISHED).execute(Tuple.of(client))).chain(events -> {
            Row locked = events.iterator().next();
            String deliveries = locked.getString(0);
            String eventRows = locked.getString(1);
            Long[] positions = locked.getArrayOfLongs(2);
            List<String> rows = new ArrayList<>();
            Uni<Void> read = Uni.createFrom().voidItem();
            for (Table table : PARENTS_FIRST) {
                read = read.chain(() -> from.preparedQuery(table.rows()).execute(Tuple.of(client))
                        .invoke(json -> rows.add(json.iterator().next().getString(0))).replaceWithVoid());
            }
            return read.chain(() -> target.withTransaction(to -> to.query(statementTimeout(started)).execute()
                            .chain(() -> write(to, client, rows, eventRows, deliveries))
                            // the last moment to give up: past the target's commit the copy is there, and the move goes on
                            .call(() -> System.nanoTime() - started > maxPause
                                    ? Uni.createFrom().failure(new PauseOverrun()) : Uni.createFrom().voidItem())))
                    // committed there: the old shard's part is no longer bounded by the pause, it must finish
                    .call(() -> from.query("SET LOCAL statement_timeout = 0").execute())
                    .chain(counts -> run(from, "DELETE FROM outbox_deliveries WHERE position = ANY ($1)", Tuple.of(positions))
                            .chain(() -> run(from, "DELETE FROM outbox_events WHERE position = ANY ($1)", Tuple.of(positions)))
                            .map(ignored -> {
                                counts[4] = positions.length;
                                return counts;
                            }));
        }));
    }

    private Uni<long[]> write(SqlConnection to, String client, List<String> rows, String events, String deliveries) {
        long[] counts = new long[5];
        Uni<Void> done = deleteAll(to, client).chain(() -> run(to, "DELETE FROM client_fences WHERE client = $1", Tuple.of(client)));
        for (int i = 0; i < PARENTS_FIRST.size(); i++) {
            String table = PARENTS_FIRST.get(i).name();
            String json = rows.get(i);
            int slot = i;
            done = done.chain(() -> to.preparedQuery("INSERT INTO " + table + " SELECT * FROM json_populate_recordset(NULL::"
                    + table + ", $1::text::json)").execute(Tuple.of(json)).invoke(inserted -> counts[slot] = inserted.rowCount())
                    .replaceWithVoid());
        }
        return done.chain(() -> to.query(EVENT_COLUMNS).execute())
                .chain(columns -> to.preparedQuery(INSERT_EVENTS.formatted(columns.iterator().next().getString(0)))
                        .execute(Tuple.of(events, deliveries)))
                .replaceWith(counts);
    }

    private static Uni<Void> deleteAll(SqlConnection connection, String client) {
        Uni<Void> done = Uni.createFrom().voidItem();
        for (String delete : DELETE) {
            done = done.chain(() -> run(connection, delete, Tuple.of(client)));
        }
        return done;
    }

    private static boolean lockNotGranted(Throwable failure) {
        return failure instanceof PgException pg && "55P03".equals(pg.getSqlState());
    }

    /** What is left of the pause, as the transaction's bound for each of its statements (at least a millisecond). */
    private String statementTimeout(long started) {
        long left = TimeUnit.NANOSECONDS.toMillis(maxPause - (System.nanoTime() - started));
        return "SET LOCAL statement_timeout = " + Math.max(1, left);
    }

    /** The copy took longer than the pause allows: a statement cancelled at its bound, or the time gone before the commit. */
    private static boolean overran(Throwable failure) {
        return failure instanceof PauseOverrun || failure instanceof PgException pg && "57014".equals(pg.getSqlState());
    }

    private static final class PauseOverrun extends RuntimeException {
        PauseOverrun() {
            super("ledger.moves.max-pause passed before the target's commit", null, false, false);
        }
    }

    private void paused(long started, String result) {
        Timer.builder("ledger.client.moves").description("Client moves from the client's shard on: its pause at most, by result")
                .tag("result", result).register(metrics).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
    }

    private static Uni<Void> run(SqlConnection connection, String sql, Tuple args) {
        return connection.preparedQuery(sql).execute(args).replaceWithVoid();
    }

}
