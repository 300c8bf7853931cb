package dev.ledger.dependency;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

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
     * {@code answer}'s outcome (its item, or its failure unwrapped from a {@link CompletionException}), delivered
     * within {@code caller} ({@link #deliver}).
     */
    public static <T> Uni<T> within(Context caller, CompletionStage<T> answer) {
        return Uni.createFrom().emitter(emitter -> answer.whenComplete((item, failure) -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            deliver(caller, cause == null ? () -> emitter.complete(item) : () -> emitter.fail(cause));
        }));
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
