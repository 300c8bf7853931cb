package dev.ledger.outbox;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.DependencyTimer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Publishes one shard's outbox to one broker: every instance runs one per broker switched on and shard
 * ({@link OutboxRelays}), each on its own: a shard down or a broker down stops only its relays. A round is one PostgreSQL transaction: {@linkplain OutboxRepository#claim claim}
 * a batch of this broker's deliveries (several relays of one broker share the work without taking the
 * same events, each account's events stay in order, and another broker's relay locks other rows), publish
 * it through the {@link EventPublisher} (which completes on the broker's confirms), mark it delivered,
 * commit. At least once: a relay that dies between the confirm and the commit leaves the batch
 * undelivered, and it is published again, with the same event ids.
 *
 * <p>When it runs: this instance's request path wakes it after each change that wrote an event
 * ({@link Outbox#written}), rounds follow each other while they find full batches or were woken
 * meanwhile, and a poll every {@code poll-interval} finds events nobody woke it for (written by an
 * instance that died or cannot reach the broker). After a failure (broker or PostgreSQL down) it
 * waits, doubling from 100 ms up to the poll interval, and logs once per outage.
 */
final class OutboxRelay {
    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);

    private final String destination;
    /** The destination, and the shard when there are several: what the logs name. */
    private final String name;
    /** The metrics' tags: {@code broker}, and {@code shard} when there are several. */
    private final Tags tags;
    private final LedgerConfig.Events.Relay settings;
    private final OutboxRepository outbox;
    private final EventPublisher publisher;
    /** Each batch's publish, until the broker confirmed it (or failed). */
    private final DependencyTimer publishes;
    private final Pool pool;
    private final ObjectMapper mapper;
    private final Vertx vertx;

    private final AtomicBoolean running = new AtomicBoolean();
    /** Woken since the current round claimed: there may be events it did not see. */
    private final AtomicBoolean woken = new AtomicBoolean();
    /**
     * Events the broker confirmed whose mark did not commit (PostgreSQL failed in between): marked, not
     * published again, when this relay claims them next. Another relay would publish them again.
     */
    private final Set<Long> confirmedUnmarked = ConcurrentHashMap.newKeySet();
    private final LongAdder published = new LongAdder();
    private final LongAdder rounds = new LongAdder();
    private final LongAdder failedRounds = new LongAdder();
    private volatile OffsetDateTime oldestUnpublished;
    private volatile boolean backingOff;
    private volatile boolean stopped;
    private Context context;
    private Executor onContext;
    private long poll = -1;
    private int failures;

    /** {@code shard}: the name of the shard whose outbox {@code pool} reads, null when the default shard is the only one. */
    OutboxRelay(EventPublisher publisher, String shard, LedgerConfig.Events.Relay settings, OutboxRepository outbox, Pool pool,
                ObjectMapper mapper, Vertx vertx, DependencyTimer publishes) {
        this.destination = publisher.destination();
        this.name = shard == null ? destination : destination + " from shard " + shard;
        this.tags = shard == null ? Tags.of("broker", destination) : Tags.of("broker", destination, "shard", shard);
        this.publishes = publishes;
        this.settings = settings;
        this.outbox = outbox;
        this.publisher = publisher;
        this.pool = pool;
        this.mapper = mapper;
        this.vertx = vertx;
    }

    String destination() {
        return destination;
    }

    void start() {
        context = vertx.getOrCreateContext();
        onContext = task -> context.runOnContext(ignored -> task.run());
        context.runOnContext(ignored -> poll = vertx.setPeriodic(settings.pollInterval().toMillis(), id -> {
            refreshOldest();
            wake();
        }));
        LOG.infof("Events relay to %s started: batches of up to %d, polling every %d ms", name,
                settings.batchSize(), settings.pollInterval().toMillis());
        wake();
    }

    void stop() {
        stopped = true;
        if (context != null) {
            context.runOnContext(ignored -> vertx.cancelTimer(poll));
        }
    }

    /** Asks for a round soon: now if none runs, else right after the running one. Cheap enough for every request. */
    void wake() {
        woken.set(true);
        if (!stopped && !backingOff && context != null && running.compareAndSet(false, true)) {
            onContext.execute(this::round);
        }
    }

    private void round() {
        woken.set(false);
        relayOnce().emitOn(onContext).subscribe().with(count -> {
            if (failures > 0) {
                LOG.infof("Events relay to %s: publishing again after %d failed rounds", name, failures);
                failures = 0;
            }
            if (!stopped && (count >= settings.batchSize() || woken.get())) {
                round();
                return;
            }
            running.set(false);
            if (woken.get()) {
                wake(); // woken between the check above and running's reset
            }
        }, this::failed);
    }

    private void failed(Throwable failure) {
        failedRounds.increment();
        if (failures++ == 0) {
            LOG.warnf("Events relay to %s: a round failed (%s); its events wait in PostgreSQL, retrying", name, describe(failure));
        } else {
            LOG.debugf("Events relay to %s: round failed again (%s)", name, describe(failure));
        }
        long delay = Math.min(settings.pollInterval().toMillis(), FIRST_BACKOFF.toMillis() << Math.min(failures - 1, 20));
        backingOff = true;
        running.set(false);
        vertx.setTimer(delay, id -> {
            backingOff = false;
            wake();
        });
    }

    private static String describe(Throwable failure) {
        return failure.getClass().getSimpleName() + ": " + failure.getMessage();
    }

    /** One claim, publish and mark, in one transaction; answers how many events it claimed, or fails. */
    private Uni<Integer> relayOnce() {
        List<Long> confirmed = new ArrayList<>();
        return pool.withTransaction(connection -> outbox.claim(pool, connection, destination, settings.batchSize())
                        .chain(events -> publishAndMark(connection, events, confirmed)))
                .onFailure().invoke(failure -> {
                    if (confirmedUnmarked.size() > OutboxRepository.WINDOW_PER_EVENT * settings.batchSize()) {
                        confirmedUnmarked.clear(); // stale (another relay marked them): forgetting costs a duplicate at most
                    }
                    confirmedUnmarked.addAll(confirmed);
                })
                .chain(outcome -> {
                    confirmedUnmarked.removeAll(confirmed);
                    published.add(outcome.published());
                    if (outcome.claimed() > 0) {
                        rounds.increment();
                    }
                    return outcome.failure() == null
                            ? Uni.createFrom().item(outcome.claimed())
                            : Uni.createFrom().failure(outcome.failure());
                });
    }

    /** What a round did: events claimed, events the broker confirmed, and why it stopped short, if it did. */
    private record Outcome(int claimed, int published, Throwable failure) {
    }

    /**
     * Publishes the claimed events (those confirmed in an earlier round only need their mark) and marks
     * what the broker confirmed: all of them, or on failure the confirmed ones at the front, so that the
     * rest are published again in order. {@code confirmed} collects the positions to mark.
     */
    private Uni<Outcome> publishAndMark(SqlConnection connection, List<OutboxRepository.PendingEvent> events,
                                        List<Long> confirmed) {
        if (events.isEmpty()) {
            return Uni.createFrom().item(new Outcome(0, 0, null));
        }
        List<OutboxRepository.PendingEvent> fresh = new ArrayList<>(events.size());
        for (OutboxRepository.PendingEvent event : events) {
            if (confirmedUnmarked.contains(event.position())) {
                confirmed.add(event.position());
            } else {
                fresh.add(event);
            }
        }
        List<OutgoingEvent> outgoing = fresh.stream().map(this::outgoing).toList();
        return publishes.time(() -> publisher.publish(outgoing))
                .onItem().transform(ignored -> new Outcome(events.size(), fresh.size(), null))
                .onFailure(EventPublishException.class).recoverWithItem(failure ->
                        new Outcome(events.size(), ((EventPublishException) failure).confirmed(), failure))
                .invoke(outcome -> fresh.subList(0, outcome.published()).forEach(event -> confirmed.add(event.position())))
                .call(outcome -> confirmed.isEmpty()
                        ? Uni.createFrom().voidItem()
                        : outbox.markDelivered(pool, connection, destination, confirmed));
    }

    private OutgoingEvent outgoing(OutboxRepository.PendingEvent event) {
        try {
            return new OutgoingEvent(event.envelope().eventId(), event.envelope().type(), event.envelope().accountId(),
                    mapper.writeValueAsBytes(event.envelope()), event.traceParent());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Cannot render event " + event.envelope().eventId(), e);
        }
    }

    private void refreshOldest() {
        outbox.oldestUndelivered(pool, destination).subscribe().with(oldest -> oldestUnpublished = oldest,
                failure -> LOG.debugf("Events relay to %s: cannot read the oldest unpublished event (%s)", name, describe(failure)));
    }

    /** Seconds since the oldest unpublished event was written, as of the last poll; 0 when none is waiting. */
    double oldestUnpublishedAgeSeconds() {
        OffsetDateTime oldest = oldestUnpublished;
        return oldest == null ? 0 : Math.max(0, (System.currentTimeMillis() - oldest.toInstant().toEpochMilli()) / 1000.0);
    }

    /** This relay's meters, tagged {@code broker} with its destination (and {@code shard}): see {@link OutboxRelays#relayMetrics}. */
    void bind(MeterRegistry registry) {
        Tags broker = tags;
        Gauge.builder("ledger.events.oldest.unpublished.age", this, OutboxRelay::oldestUnpublishedAgeSeconds)
                .tags(broker).baseUnit("seconds")
                .description("Age of the oldest event not yet published to this broker, read at every poll of its relay; 0 when none waits")
                .register(registry);
        FunctionCounter.builder("ledger.events.published", published, LongAdder::sum)
                .tags(broker).description("Events this instance's relay published and the broker confirmed")
                .register(registry);
        FunctionCounter.builder("ledger.events.relay.rounds", rounds, LongAdder::sum)
                .tags(broker).description("Relay rounds that claimed events; published over rounds is the mean batch")
                .register(registry);
        FunctionCounter.builder("ledger.events.relay.failures", failedRounds, LongAdder::sum)
                .tags(broker).description("Relay rounds that failed (broker or PostgreSQL unavailable); their events are published later")
                .register(registry);
    }
}
