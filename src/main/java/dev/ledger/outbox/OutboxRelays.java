package dev.ledger.outbox;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.DependencyTimer;
import dev.ledger.shard.Shards;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link OutboxRelay} per broker switched on and per shard ({@link Shards}), each publishing every event of its
 * shard's outbox to its broker on its own.
 */
@ApplicationScoped
public class OutboxRelays {
    private final List<OutboxRelay> relays = new ArrayList<>();
    /** The relays of each shard, by shard name. */
    private final Map<String, List<OutboxRelay>> byShard = new LinkedHashMap<>();
    private final String[] destinations;

    public OutboxRelays(LedgerConfig config, Instance<EventPublisher> publishers, OutboxRepository outbox, Shards shards,
                        ObjectMapper mapper, Vertx vertx, MeterRegistry registry) {
        List<EventPublisher> enabled = publishers.stream().filter(EventPublisher::enabled)
                .sorted(Comparator.comparing(EventPublisher::destination)).toList();
        // one publish timer per broker, whichever shard's events it publishes
        Map<EventPublisher, DependencyTimer> publishes = new LinkedHashMap<>();
        enabled.forEach(publisher -> publishes.put(publisher, DependencyTimer.of(registry, publisher.destination(), "events")));
        shards.all().forEach((shard, pool) -> {
            List<OutboxRelay> ofShard = enabled.stream()
                    .map(publisher -> new OutboxRelay(publisher, shards.several() ? shard : null, config.events().relay(),
                            outbox, pool, mapper, vertx, publishes.get(publisher)))
                    .toList();
            byShard.put(shard, ofShard);
            relays.addAll(ofShard);
        });
        this.destinations = enabled.stream().map(EventPublisher::destination).toArray(String[]::new);
    }

    void start(@Observes StartupEvent started) {
        relays.forEach(OutboxRelay::start);
    }

    void stop(@Observes ShutdownEvent shutdown) {
        relays.forEach(OutboxRelay::stop);
    }

    /** The brokers switched on: each change writes one delivery of its event per broker. Empty: no event is written. */
    String[] destinations() {
        return destinations.clone();
    }

    /** Asks the relays of {@code shard} for a round soon. Cheap enough for every request. */
    void wake(String shard) {
        for (OutboxRelay relay : byShard.get(shard)) {
            relay.wake();
        }
    }

    /**
     * In /q/metrics, per relay, tagged {@code broker} (rabbitmq, kafka) and, when there are several shards, {@code shard}:
     * {@code ledger_events_oldest_unpublished_age_seconds} (the backlog's age, for alerts),
     * {@code ledger_events_published_total} (its rate is the publish rate),
     * {@code ledger_events_relay_rounds_total} (rounds that claimed events: published over rounds is the mean
     * batch) and {@code ledger_events_relay_failures_total} (rounds that failed: broker or PostgreSQL down).
     */
    @Produces
    @Singleton
    MeterBinder relayMetrics() {
        return registry -> relays.forEach(relay -> relay.bind(registry));
    }
}
