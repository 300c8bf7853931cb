package dev.ledger.commands.rabbitmq;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Which of one channel's deliveries to acknowledge, and how: the bookkeeping alone, under its owner's lock. A
 * {@code basic.ack} with {@code multiple} acknowledges every delivery of the channel up to its tag, so it may name
 * only the end of a run of settled deliveries that starts at the oldest one not yet acknowledged or given back. A
 * settled delivery behind one that is not waits for it, until more than {@code patience} wait so; then they are
 * acknowledged one by one. Delivery tags grow with each delivery on a channel, and a delivery is known here before it
 * can be settled, so a tag the broker delivered later than the run's end is never covered.
 */
final class AckPlan {
    /** What to send: one acknowledgement with {@code multiple} up to {@code upTo} (none when -1), then each of {@code singles}. */
    record Acks(long upTo, List<Long> singles) {
        static final Acks NONE = new Acks(-1, List.of());

        boolean none() {
            return upTo < 0 && singles.isEmpty();
        }
    }

    private final int patience;
    private final TreeSet<Long> unsettled = new TreeSet<>();
    private final TreeSet<Long> settled = new TreeSet<>();

    AckPlan(int patience) {
        this.patience = patience;
    }

    void delivered(long tag) {
        unsettled.add(tag);
    }

    /** The delivery is settled and may be acknowledged; false for one this channel does not hold (any more). */
    boolean settle(long tag) {
        return unsettled.contains(tag) && settled.add(tag);
    }

    /** The delivery was given back to the broker: no acknowledgement is owed for it, none may name it. */
    boolean forget(long tag) {
        settled.remove(tag);
        return unsettled.remove(tag);
    }

    /** The acknowledgements owed now; they are taken as sent. */
    Acks take() {
        long upTo = -1;
        while (!settled.isEmpty() && unsettled.first().equals(settled.first())) {
            upTo = unsettled.pollFirst();
            settled.pollFirst();
        }
        if (settled.size() <= patience) {
            return upTo < 0 ? Acks.NONE : new Acks(upTo, List.of());
        }
        List<Long> singles = new ArrayList<>(settled);
        unsettled.removeAll(settled);
        settled.clear();
        return new Acks(upTo, singles);
    }
}
