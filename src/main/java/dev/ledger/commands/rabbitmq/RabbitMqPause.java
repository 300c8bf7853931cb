package dev.ledger.commands.rabbitmq;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Breakers;
import dev.ledger.shard.ShardLayout;
import dev.ledger.shard.Shards;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Pauses the consumption of RabbitMQ's commands while their dependencies are away: the circuit breaker
 * {@code commands} ({@code ledger.messaging.rabbitmq.breaker.*}) counts the commands that met an unavailable
 * store or Postgres; when it opens, the consumer is cancelled (the commands delivered already are requeued after
 * their back-off, nothing new arrives), and after {@code ledger.messaging.rabbitmq.pause} it is resumed for a
 * trial. {@code ledger_commands_pauses_total} counts the pauses. (Kafka's door needs none: a command retried
 * in place holds its lane, and a shard whose records fill its budget has its clients' partitions paused.)
 *
 * <p>With several PostgreSQL shards ({@link Shards}) each shard has a breaker of its own ({@code commands} the
 * default shard's, {@code commands-<name>} each other's), counting its clients' commands, and the one queue pauses
 * only while every shard's breaker is open: a shard that is down must not hold back the other shards' commands
 * (its own are requeued after their back-off, as any command that meets an unavailable dependency). The store being
 * away fails every shard's commands, so it still pauses the queue.
 */
@ApplicationScoped
public class RabbitMqPause {
    private final Shards shards;
    private final RabbitMqCommands consumer;
    private final Counter pauses;
    /** Each shard's breaker, by shard name, and the state it last moved to. */
    private final Map<String, CircuitBreaker> breakers = new LinkedHashMap<>();
    private final Map<String, CircuitBreaker.State> states = new ConcurrentHashMap<>();

    public RabbitMqPause(RabbitMqCommands consumer, Breakers factory, LedgerConfig config, MeterRegistry metrics, Shards shards) {
        this.consumer = consumer;
        this.shards = shards;
        this.pauses = Counter.builder("ledger.commands.pauses")
                .description("Times the consumption of commands paused for unavailable dependencies").register(metrics);
        LedgerConfig.Messaging.Rabbitmq rabbitmq = config.messaging().rabbitmq();
        LedgerConfig.Messaging.Rabbitmq.Breaker settings = rabbitmq.breaker();
        Breakers.Policy policy = new Breakers.Policy(settings.window(), settings.minimumCalls(), settings.failureRatio(),
                rabbitmq.pause(), 1, true);
        for (String shard : shards.all().keySet()) {
            String name = ShardLayout.DEFAULT.equals(shard) ? "commands" : "commands-" + shard;
            states.put(shard, CircuitBreaker.State.CLOSED);
            breakers.put(shard, factory.create(name, policy, "commands" + shards.where(shard)
                    + " meet unavailable dependencies; consumption paused for " + rabbitmq.pause().toMillis() + " ms"
                    + (shards.several() ? " once every shard's commands do" : ""), state -> moved(shard, state)));
        }
    }

    /** A breaker moved: consumption paused while every shard's breaker is open, resumed (for a trial) otherwise. */
    private synchronized void moved(String shard, CircuitBreaker.State state) {
        states.put(shard, state);
        boolean everyOpen = states.values().stream()
                .allMatch(each -> each == CircuitBreaker.State.OPEN || each == CircuitBreaker.State.FORCED_OPEN);
        if (everyOpen) {
            if (!consumer.paused()) {
                consumer.pause();
                pauses.increment();
            }
        } else if (consumer.paused()) {
            consumer.resume();
        }
    }

    /** A command of {@code client} met an unavailable dependency. */
    public void unavailable(String client) {
        breakers.get(shards.shardOf(client)).onError(0, TimeUnit.NANOSECONDS, new IllegalStateException("dependency unavailable"));
    }

    /** A command of {@code client}'s dependencies answered. */
    public void available(String client) {
        breakers.get(shards.shardOf(client)).onSuccess(0, TimeUnit.NANOSECONDS);
    }

    /** Whether consumption is paused now. */
    public boolean paused() {
        return consumer.paused();
    }
}
