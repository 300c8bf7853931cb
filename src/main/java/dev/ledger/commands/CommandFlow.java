package dev.ledger.commands;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Breaker;
import dev.ledger.dependency.Breakers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import io.smallrye.reactive.messaging.ChannelRegistry;
import io.smallrye.reactive.messaging.PausableChannel;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;

/**
 * Pauses the consumption of commands while their dependencies are away: the circuit breaker
 * {@code commands} ({@code ledger.messaging.breaker.*}) counts the commands that met an unavailable
 * Redis or Postgres; when it opens, the channel is paused (the prefetched commands are requeued after
 * their back-off, nothing new arrives), and after {@code ledger.messaging.pause} it is resumed, so
 * that the next command is the breaker's trial: its dependencies answer and the breaker closes, or
 * not and it opens again. {@code ledger_commands_pauses_total} counts the pauses.
 */
@ApplicationScoped
public class CommandFlow {
    private static final Logger LOG = Logger.getLogger(CommandFlow.class);
    static final String CHANNEL = "commands";

    private final Breaker breaker;
    private final ChannelRegistry channels;

    public CommandFlow(ChannelRegistry channels, Breakers breakers, LedgerConfig config, MeterRegistry metrics, Vertx vertx) {
        this.channels = channels;
        Counter pauses = Counter.builder("ledger.commands.pauses")
                .description("Times the consumption of commands paused for unavailable dependencies").register(metrics);
        LedgerConfig.Messaging.Breaker settings = config.messaging().breaker();
        Duration pause = config.messaging().pause();
        Breakers.Policy policy = new Breakers.Policy(settings.window(), settings.failureRatio(), pause);
        this.breaker = breakers.create("commands", policy,
                "commands meet unavailable dependencies; consumption paused for " + pause.toMillis() + " ms",
                state -> {
                    PausableChannel channel = channels.getPausable(CHANNEL);
                    if (channel == null || state != CircuitBreakerState.OPEN) {
                        return;
                    }
                    channel.pause();
                    pauses.increment();
                    // the breaker half-opens at its next call, which a paused channel never makes
                    vertx.setTimer(pause.toMillis(), id -> {
                        LOG.infof("Consumption of commands resumed: the next command tries the dependencies again");
                        channel.resume();
                    });
                });
    }

    /** A command met an unavailable dependency. */
    public void unavailable() {
        breaker.record(true);
    }

    /** A command's dependencies answered. */
    public void available() {
        breaker.record(false);
    }

    /** Whether consumption is paused now. */
    public boolean paused() {
        PausableChannel channel = channels.getPausable(CHANNEL);
        return channel != null && channel.isPaused();
    }
}
