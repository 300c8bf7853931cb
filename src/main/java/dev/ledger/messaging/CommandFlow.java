package dev.ledger.messaging;

import dev.ledger.config.LedgerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.concurrent.TimeUnit;

/**
 * Pauses the consumption of commands while their dependencies are away: a circuit breaker
 * {@code commands} counts the commands that met an unavailable Redis or Postgres; when it opens,
 * the channel is paused (the prefetched commands are requeued after their back-off, nothing new
 * arrives), and after {@code ledger.messaging.pause} it is resumed for a trial.
 */
@ApplicationScoped
public class CommandFlow {
    private static final Logger LOG = Logger.getLogger(CommandFlow.class);
    static final String CHANNEL = "commands";

    private final CircuitBreakerRegistry breakers = CircuitBreakerRegistry.ofDefaults();
    private final CircuitBreaker breaker;
    private final ChannelRegistry channels;

    public CommandFlow(ChannelRegistry channels, LedgerConfig config, MeterRegistry metrics) {
        this.channels = channels;
        Counter pauses = Counter.builder("ledger.commands.pauses")
                .description("Times the consumption of commands paused for unavailable dependencies").register(metrics);
        this.breaker = breakers.circuitBreaker("commands", CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(10)
                .minimumNumberOfCalls(5)
                .failureRateThreshold(50)
                .waitDurationInOpenState(config.messaging().pause())
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .permittedNumberOfCallsInHalfOpenState(1)
                .writableStackTraceEnabled(false)
                .build());
        breaker.getEventPublisher().onStateTransition(event -> {
            CircuitBreaker.State state = event.getStateTransition().getToState();
            PausableChannel channel = channels.getPausable(CHANNEL);
            if (channel == null) {
                return;
            }
            if (state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN) {
                LOG.warnf("Commands meet unavailable dependencies: consumption paused for %s", config.messaging().pause());
                channel.pause();
                pauses.increment();
            } else if (channel.isPaused()) {
                LOG.infof("Commands: consumption resumed (breaker %s)", state.name().toLowerCase().replace('_', '-'));
                channel.resume();
            }
        });
    }

    void unavailable() {
        breaker.onError(0, TimeUnit.NANOSECONDS, new IllegalStateException("dependency unavailable"));
    }

    void available() {
        breaker.onSuccess(0, TimeUnit.NANOSECONDS);
    }

    /** Whether consumption is paused now. */
    public boolean paused() {
        PausableChannel channel = channels.getPausable(CHANNEL);
        return channel != null && channel.isPaused();
    }

    /** The breaker, for tests: its state, and {@code reset()} to close it. */
    public CircuitBreaker breaker() {
        return breaker;
    }

    /** In /q/metrics as {@code resilience4j_circuitbreaker_*}, name {@code commands}. */
    @Produces
    @Singleton
    MeterBinder commandBreakerMetrics() {
        return TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(breakers);
    }
}
