package dev.ledger.outbox;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * The request path's side of the outbox: the brokers the ledger's functions write an event for with each
 * applied transaction and opened account (their {@code p_destinations} argument, one statement either
 * way; none when no broker is switched on), and the wake-up of this instance's relays once such a change
 * has committed.
 */
@ApplicationScoped
public class Outbox {
    private final OutboxRelays relays;
    private final String[] destinations;

    public Outbox(OutboxRelays relays) {
        this.relays = relays;
        this.destinations = relays.destinations();
    }

    /** The brokers each change writes its event for; empty while events are switched off. */
    public String[] destinations() {
        return destinations;
    }

    /** A change wrote its event and committed: this instance's relays publish it now rather than at their next poll. */
    public void written() {
        if (destinations.length > 0) {
            relays.wake();
        }
    }
}
