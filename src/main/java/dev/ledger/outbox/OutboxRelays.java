package dev.ledger.outbox;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.DependencyTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.Comparator;
import java.util.List;

/** One {@link OutboxRelay} per broker switched on, each publishing every event to its broker on its own. */
@ApplicationScoped
public class OutboxRelays {
    private final List<OutboxRelay> relays;
    private final String[] destinations;

    public OutboxRelays(LedgerConfig config, Instance<EventPublisher> publishers, OutboxRepository outbox, Pool pool,
                        ObjectMapper mapper, Vertx vertx, MeterRegistry registry) {
        this.relays = publishers.stream().filter(EventPublisher::enabled)
                .sorted(Comparator.comparing(EventPublisher::destination))
                .map(publisher -> new OutboxRelay(publisher, config.events().relay(), outbox, pool, mapper, vertx,
                        DependencyTimer.of(registry, publisher.destination(), "events")))
                .toList();
        this.destinations = relays.stream().map(OutboxRelay::destination).toArray(String[]::new);
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

    /** Asks every relay for a round soon. Cheap enough for every request. */
    void wake() {
        for (OutboxRelay relay : relays) {
            relay.wake();
        }
    }

    /**
     * In /q/metrics, per relay, tagged {@code broker} (rabbitmq, kafka):
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
