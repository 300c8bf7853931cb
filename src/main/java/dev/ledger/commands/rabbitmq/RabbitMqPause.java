package dev.ledger.commands.rabbitmq;

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
 * Pauses the consumption of RabbitMQ's commands while their dependencies are away: the circuit breaker
 * {@code commands} ({@code ledger.messaging.rabbitmq.breaker.*}) counts the commands that met an unavailable
 * store or Postgres; when it opens, the channel is paused (the prefetched commands are requeued after
 * their back-off, nothing new arrives), and after {@code ledger.messaging.rabbitmq.pause} it is resumed for a
 * trial. {@code ledger_commands_pauses_total} counts the pauses. (Kafka's door needs none: a command retried
 * in place holds its lane, and the lanes full stop the fetching.)
 */
@ApplicationScoped
public class RabbitMqPause {
    static final String CHANNEL = "commands";

    private final CircuitBreaker breaker;
    private final ChannelRegistry channels;

    public RabbitMqPause(ChannelRegistry channels, Breakers breakers, LedgerConfig config, MeterRegistry metrics) {
        this.channels = channels;
        Counter pauses = Counter.builder("ledger.commands.pauses")
                .description("Times the consumption of commands paused for unavailable dependencies").register(metrics);
        LedgerConfig.Messaging.Rabbitmq rabbitmq = config.messaging().rabbitmq();
        LedgerConfig.Messaging.Rabbitmq.Breaker settings = rabbitmq.breaker();
        Breakers.Policy policy = new Breakers.Policy(settings.window(), settings.minimumCalls(), settings.failureRatio(),
                rabbitmq.pause(), 1, true);
        this.breaker = breakers.create("commands", policy,
                "commands meet unavailable dependencies; consumption paused for " + rabbitmq.pause().toMillis() + " ms",
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
