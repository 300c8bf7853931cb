package dev.ledger.outbox;

import io.smallrye.mutiny.Uni;

import java.util.List;

/**
 * Where a relay hands events to a broker. The outbox knows nothing else of a broker: another one
 * is another implementation, with a {@link #destination()} of its own in {@code outbox_deliveries}.
 *
 * <p>{@link #publish} sends the events in the order given and completes once the broker has
 * confirmed every one (it holds them durably). It keeps nothing to send later: on failure it fails
 * with an {@link EventPublishException} saying how many leading events were confirmed, and the relay
 * publishes the others again in a later round, with the same ids.
 */
public interface EventPublisher {
    /** The broker's name in {@code outbox_deliveries.destination} and in the relay's metrics. */
    String destination();

    /** Whether this broker is switched on: events are written for it, and a relay publishes them. */
    boolean enabled();

    Uni<Void> publish(List<OutgoingEvent> events);
}
