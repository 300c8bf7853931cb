package dev.ledger.commands.rabbitmq;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RabbitMQ door's acknowledgements together (pure bookkeeping): one {@code multiple} acknowledgement names only
 * the end of a run of settled deliveries from the oldest one owed, never a delivery still at work.
 */
class AckPlanTest {
    private static AckPlan delivered(int patience, long... tags) {
        AckPlan plan = new AckPlan(patience);
        for (long tag : tags) {
            plan.delivered(tag);
        }
        return plan;
    }

    @Test
    void oneAcknowledgementForTheOldestRunOfSettledDeliveries() {
        AckPlan plan = delivered(10, 1, 2, 3, 4, 5);
        plan.settle(2);
        plan.settle(3);
        assertTrue(plan.take().none(), "1 is still at work: a multiple acknowledgement of 3 would take it too");
        plan.settle(1);
        plan.settle(5);
        assertEquals(new AckPlan.Acks(3, List.of()), plan.take(), "1 to 3 at once; 5 waits behind 4");
        plan.settle(4);
        assertEquals(new AckPlan.Acks(5, List.of()), plan.take());
        assertTrue(plan.take().none(), "nothing is acknowledged twice");
    }

    @Test
    void aDeliveryGivenBackEndsNoRunAndIsNeverAcknowledged() {
        AckPlan plan = delivered(10, 7, 8, 9);
        plan.settle(8);
        assertTrue(plan.forget(7), "7 requeued");
        assertEquals(new AckPlan.Acks(8, List.of()), plan.take());
        assertFalse(plan.settle(7), "a delivery given back cannot be settled");
        assertFalse(plan.settle(42), "nor one this channel never delivered (a channel before a reconnection)");
        plan.settle(9);
        assertEquals(new AckPlan.Acks(9, List.of()), plan.take());
    }

    @Test
    void settledDeliveriesBehindASlowOneGoOneByOnePastThePatience() {
        AckPlan plan = delivered(2, 1, 2, 3, 4, 5);
        plan.settle(2);
        plan.settle(3);
        assertTrue(plan.take().none(), "two waiting is within the patience");
        plan.settle(5);
        assertEquals(new AckPlan.Acks(-1, List.of(2L, 3L, 5L)), plan.take(), "three waiting: each by itself, 1 and 4 not");
        plan.settle(1);
        assertEquals(new AckPlan.Acks(1, List.of()), plan.take(), "the run from 1 ends at 1: 2 and 3 are acknowledged already");
        plan.settle(4);
        assertEquals(new AckPlan.Acks(4, List.of()), plan.take());
    }
}
