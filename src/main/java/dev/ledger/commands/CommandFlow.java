package dev.ledger.commands;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Breakers;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.TimeUnit;

/**
 * Pauses the consumption of commands while their dependencies are away: the circuit breaker
 * {@code commands} ({@code ledger.messaging.breaker.*}) counts the commands that met an unavailable
 * Redis or Postgres; when it opens, the channel is paused (the prefetched commands are requeued after
 * their back-off, nothing new arrives), and after {@code ledger.messaging.pause} it is resumed for a
 * trial. {@code ledger_commands_pauses_total} counts the pauses.
 */
@ApplicationScoped
public class CommandFlow {
    static final String CHANNEL = "commands";

    private final CircuitBreaker breaker;
    private final ChannelRegistry channels;

    public CommandFlow(ChannelRegistry channels, Breakers breakers, LedgerConfig config, MeterRegistry metrics) {
        this.channels = channels;
        Counter pauses = Counter.builder("ledger.commands.pauses")
                .description("Times the consumption of commands paused for unavailable dependencies").register(metrics);
        LedgerConfig.Messaging.Breaker settings = config.messaging().breaker();
        Breakers.Policy policy = new Breakers.Policy(settings.window(), settings.minimumCalls(), settings.failureRatio(),
                config.messaging().pause(), 1, true);
        this.breaker = breakers.create("commands", policy,
                "commands meet unavailable dependencies; consumption paused for " + config.messaging().pause().toMillis() + " ms",
                state -> {
                    PausableChannel channel = channels.getPausable(CHANNEL);
                    if (channel == null) {
                        return;
                    }
                    if (state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN) {
                        channel.pause();
                        pauses.increment();
                    } else if (channel.isPaused()) {
                        channel.resume();
                    }
                });
    }

    /** A command met an unavailable dependency. */
    public void unavailable() {
        breaker.onError(0, TimeUnit.NANOSECONDS, new IllegalStateException("dependency unavailable"));
    }

    /** A command's dependencies answered. */
    public void available() {
        breaker.onSuccess(0, TimeUnit.NANOSECONDS);
    }

    /** Whether consumption is paused now. */
    public boolean paused() {
        PausableChannel channel = channels.getPausable(CHANNEL);
        return channel != null && channel.isPaused();
    }
}
