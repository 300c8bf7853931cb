package dev.ledger.messaging;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The command door in /q/metrics: {@code ledger_commands_total} by outcome (applied, refused,
 * replayed, key-reused, redelivered, dead-lettered, the last also by {@code problem}), and the lag,
 * {@code ledger_commands_queued}: the commands waiting in the queue, as {@link CommandBroker} last read it.
 */
@ApplicationScoped
public class CommandMetrics {
    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final AtomicLong queued = new AtomicLong(-1);

    public CommandMetrics(MeterRegistry registry, LedgerConfig config) {
        this.registry = registry;
        if (config.messaging().rabbitmq().enabled()) {
            Gauge.builder("ledger.commands.queued", queued, AtomicLong::get)
                    .description("Commands waiting in the commands queue (the consumer's lag); -1 until read")
                    .register(registry);
        }
    }

    void settled(Outcome outcome) {
        if (outcome instanceof Outcome.Recorded recorded) {
            count(recorded.replayed() ? "replayed" : recorded.response().status() == 201 ? "applied" : "refused", null);
        } else if (outcome instanceof Outcome.KeyReused) {
            count("key-reused", null);
        }
    }

    void redelivered() {
        count("redelivered", null);
    }

    void deadLettered(String problem) {
        count("dead-lettered", problem);
    }

    private void count(String outcome, String problem) {
        counters.computeIfAbsent(outcome + "/" + problem, ignored -> {
            // one set of tag keys for every series of a name (Prometheus refuses two): problem "none" but for dead letters
            return Counter.builder("ledger.commands").tag("outcome", outcome).tag("problem", problem == null ? "none" : problem)
                    .description("Payment commands from the broker, by what became of them").register(registry);
        }).increment();
    }

    /** The lag the broker reported last ({@link CommandBroker}). */
    void queued(long commands) {
        queued.set(commands);
    }
}
