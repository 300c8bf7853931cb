package dev.ledger.dependency;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.groups.UniOnTimeout;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Bounds a call to Redis or Postgres: Mutiny's {@code ifNoItem().after(...)}, timed on the
 * caller's own Vert.x event loop, a scheduled executor whose timers cost no wake-up of another
 * thread when set and cancelled from the loop itself (a timeout on a timer thread of its own wakes
 * that thread for every call).
 *
 * <p>The failure is a {@link DependencyTimeoutException}: the Redis circuit breaker counts it and
 * the problem mapper answers 503.
 */
public final class Deadline {
    private Deadline() {
    }

    /** The call, subscribed lazily, failing with {@link DependencyTimeoutException} after {@code bound}. */
    public static <T> Uni<T> within(Duration bound, String what, Supplier<? extends Uni<? extends T>> call) {
        UniOnTimeout<T> timeout = Uni.createFrom().<T>deferred(call::get).ifNoItem().after(bound);
        Supplier<Throwable> failure = () -> new DependencyTimeoutException(what + " gave no answer within " + bound.toMillis() + " ms");
        if (!(Vertx.currentContext() instanceof ContextInternal context)) {
            // a thread with no Vert.x context (a test, a plain executor): Mutiny's default scheduler
            return timeout.failWith(failure);
        }
        // The timer runs on the loop's bare Netty executor, where no Vert.x context is current; what follows a
        // timeout (a Hibernate Reactive session closing, the request's own steps) needs the caller's, so the
        // failure is delivered within it. Only a timeout takes this turn; an answer passes as it came.
        return timeout.on(context.nettyEventLoop()).failWith(failure)
                .onFailure(DependencyTimeoutException.class)
                .recoverWithUni(timedOut -> CallerContext.within(context, CompletableFuture.<T>failedFuture(timedOut)));
    }
}
