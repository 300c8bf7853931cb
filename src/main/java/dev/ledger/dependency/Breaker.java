package dev.ledger.dependency;

import io.smallrye.faulttolerance.api.CircuitBreakerMaintenance;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import io.smallrye.faulttolerance.api.TypedGuard;
import io.smallrye.mutiny.Uni;

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

    /** {@code call}, made when the answer is subscribed to, unless the breaker is open. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public <T> Uni<T> call(Supplier<Uni<T>> call) {
        return (Uni<T>) guard.get((Supplier) call);
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

    /** What {@link #record} counts as a failure. */
    private static final class DependencyUnavailable extends RuntimeException {
        DependencyUnavailable() {
            super("dependency unavailable", null, false, false);
        }
    }
}
