package dev.ledger.dependency;

import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * Delivering a dependency's answer within the Vert.x context of the caller that asked for it. A client
 * may complete on a thread of its own (the AWS SDK's) or on the loop's bare Netty executor (a timer),
 * where the caller's context is not current; what follows the answer (a Hibernate Reactive session, the
 * request's own steps) needs it.
 */
public final class CallerContext {
    private CallerContext() {
    }

    /**
     * Runs {@code delivery} within {@code caller}: at once when it is the current context (or when the caller had
     * none), otherwise as a task of that context.
     */
    public static void deliver(Context caller, Runnable delivery) {
        if (caller == null || Vertx.currentContext() == caller) {
            delivery.run();
        } else {
            caller.runOnContext(ignored -> delivery.run());
        }
    }
}
