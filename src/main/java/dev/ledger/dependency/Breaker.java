package dev.ledger.dependency;

import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import io.smallrye.faulttolerance.api.TypedGuard;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;

import java.util.function.Supplier;

/**
 * One circuit breaker of the service, made by {@link Breakers}: SmallRye Fault Tolerance's, named, around
 * calls that answer a {@link Uni}. The call is made on the caller's own thread (an event loop stays
 * one), counted when it ends; a call the open breaker refuses fails with a failure
 * {@link Breakers#refused} recognises and is never made.
 */
public final class Breaker {
    private final String name;
    private final TypedGuard<Uni<Object>> guard;

    Breaker(String name, TypedGuard<Uni<Object>> guard) {
        this.name = name;
        this.guard = guard;
    }

    public String name() {
        return name;
    }

    /**
     * {@code call}, made when the answer is subscribed to, unless the breaker is open. A caller that
     * gives up (cancels) cancels the call too, as if there were no breaker (a command not yet sent is
     * then never sent), and the breaker counts it as a success: the dependency did not fail.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <T> Uni<T> call(Supplier<Uni<T>> call) {
        return Uni.createFrom().deferred(() -> {
            Call<T> made = new Call<>(call);
            Uni<T> guarded = (Uni<T>) guard.get((Supplier) () -> Uni.createFrom().<T>emitter(made::start));
            return guarded.onCancellation().invoke(made::cancel);
        });
    }

    /** Counts an outcome that was not a call (a command that met an unavailable dependency, or did not). */
    public void record(boolean failed) {
        call(() -> failed ? Uni.createFrom().failure(new DependencyUnavailable()) : Uni.createFrom().voidItem())
                .subscribe().with(ignored -> {
                }, ignored -> {
                });
    }

    public CircuitBreakerState state() {
        return CircuitBreakerMaintenance.get().currentState(name);
    }

    /** Back to closed, its window emptied. */
    public void reset() {
        CircuitBreakerMaintenance.get().reset(name);
    }

    /**
     * One call between its caller and the guard, which does not pass a cancellation on: cancelling
     * cancels the call's own subscription and ends the guard's with {@link CallerGaveUp}.
     */
    private static final class Call<T> {
        private final Supplier<Uni<T>> call;
        private Cancellable subscription;
        private UniEmitter<? super T> emitter;
        private boolean cancelled;

        Call(Supplier<Uni<T>> call) {
            this.call = call;
        }

        void start(UniEmitter<? super T> emitter) {
            boolean gaveUp;
            synchronized (this) {
                gaveUp = cancelled;
                this.emitter = emitter;
            }
            if (gaveUp) {
                emitter.fail(new CallerGaveUp());
                return;
            }
            Cancellable made = call.get().subscribe().with(emitter::complete, emitter::fail);
            synchronized (this) {
                subscription = made;
                gaveUp = cancelled;
            }
            if (gaveUp) { // cancelled while the call was being subscribed
                made.cancel();
            }
        }

        void cancel() {
            Cancellable made;
            UniEmitter<? super T> waiting;
            synchronized (this) {
                cancelled = true;
                made = subscription;
                waiting = emitter;
            }
            if (made != null) {
                made.cancel();
            }
            if (waiting != null) {
                waiting.fail(new CallerGaveUp());
            }
        }
    }

    /** How the guard's side of a call ends when its caller gave up: not the dependency's failure. */
    static final class CallerGaveUp extends RuntimeException {
        CallerGaveUp() {
            super("the caller gave up", null, false, false);
        }
    }

    /** What {@link #record} counts as a failure. */
    private static final class DependencyUnavailable extends RuntimeException {
        DependencyUnavailable() {
            super("dependency unavailable", null, false, false);
        }
    }
}
