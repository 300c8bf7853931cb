package dev.ledger.dependency;

import io.smallrye.faulttolerance.api.CircuitBreakerState;
import io.smallrye.faulttolerance.api.TypedGuard;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.util.TypeLiteral;
import org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Every circuit breaker of the service, made here from a typed {@link Policy}: the breaker
 * {@code redis} (or one per primary of a Redis Cluster) and {@code commands}. SmallRye Fault
 * Tolerance's programmatic guard, the library the design card names (docs/design.md has its cost
 * measured against Resilience4j's). Each logs one line per change of state (never one per call), and
 * all of them are in /q/metrics as {@code ft_circuitbreaker_*} with their name as the tag {@code method}.
 */
@ApplicationScoped
public class Breakers {
    private static final Logger LOG = Logger.getLogger(Breakers.class);
    private static final TypeLiteral<Uni<Object>> UNI = new TypeLiteral<>() {
    };

    private final Map<String, Breaker> breakers = new ConcurrentHashMap<>();

    /**
     * When a breaker opens: over the last {@code window} calls, once that many were made, a share of
     * {@code failureRatio} failures opens it; after {@code delay} the next call is a trial, which
     * decides whether it closes again.
     */
    public record Policy(int window, double failureRatio, Duration delay) {
    }

    /**
     * The breaker {@code name}, made once with {@code policy}; {@code onChange} hears every change of state
     * after it is logged ({@code opened} as a warning saying what goes without the dependency meanwhile).
     */
    public Breaker create(String name, Policy policy, String whileOpen, Consumer<CircuitBreakerState> onChange) {
        return breakers.computeIfAbsent(name, ignored -> new Breaker(name, TypedGuard.create(UNI)
                .withDescription(name)
                .withCircuitBreaker()
                .name(name)
                .requestVolumeThreshold(policy.window())
                .failureRatio(policy.failureRatio())
                .delay(policy.delay().toMillis(), ChronoUnit.MILLIS)
                .successThreshold(1)
                .skipOn(Breaker.CallerGaveUp.class)
                .onStateChange(state -> {
                    if (state == CircuitBreakerState.OPEN) {
                        LOG.warnf("Circuit breaker '%s' open: %s", name, whileOpen);
                    } else {
                        LOG.infof("Circuit breaker '%s' %s", name, state.name().toLowerCase().replace('_', '-'));
                    }
                    onChange.accept(state);
                })
                .done()
                .build()));
    }

    /** A breaker made earlier, by name. */
    public Optional<Breaker> named(String name) {
        return Optional.ofNullable(breakers.get(name));
    }

    public List<Breaker> all() {
        return List.copyOf(breakers.values());
    }

    /** Whether {@code failure} is a call an open breaker refused: nothing was sent. */
    public static boolean refused(Throwable failure) {
        return failure instanceof CircuitBreakerOpenException;
    }
}
