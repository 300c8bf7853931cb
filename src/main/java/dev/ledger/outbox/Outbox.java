package dev.ledger.outbox;

import dev.ledger.shard.ShardLayout;
import dev.ledger.shard.Shards;
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
    private final Shards shards;
    private final String[] destinations;
    /** Whether any shard besides the default is set; without, every client's relays are the default shard's. */
    private final boolean sharded;

    public Outbox(OutboxRelays relays, Shards shards) {
        this.relays = relays;
        this.shards = shards;
        this.sharded = shards.several();
        this.destinations = relays.destinations();
    }

    /** The brokers each change writes its event for; empty while events are switched off. */
    public String[] destinations() {
        return destinations;
    }

    /**
     * A change of {@code client}'s wrote its event and committed: this instance's relays of the client's shard publish
     * it now rather than at their next poll.
     */
    public void written(String client) {
        if (destinations.length > 0) {
            relays.wake(sharded ? shards.shardOf(client) : ShardLayout.DEFAULT);
        }
    }

    /** A background job wrote events on {@code shard} and committed: this instance's relays of that shard publish them now. */
    public void writtenOn(String shard) {
        if (destinations.length > 0) {
            relays.wake(shard);
        }
    }
}
