package dev.ledger.outbox;

import dev.ledger.config.LedgerConfig;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The request path's side of the outbox: whether the ledger's functions write an event with each
 * applied transaction and opened account (their {@code p_events} argument, one statement either way),
 * and the wake-up of this instance's relay once such a change has committed.
 */
@ApplicationScoped
public class Outbox {
    private final boolean enabled;
    private final OutboxRelay relay;

    public Outbox(LedgerConfig config, OutboxRelay relay) {
        this.enabled = config.events().rabbitmq().enabled();
        this.relay = relay;
    }

    /** Whether changes write their events: while a broker for them is switched on. */
    public boolean enabled() {
        return enabled;
    }

    /** A change wrote its event and committed: this instance's relay publishes it now rather than at its next poll. */
    public void written() {
        if (enabled) {
            relay.wake();
        }
    }
}
