package dev.ledger.commands;

import dev.ledger.idempotency.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What became of the commands, in /q/metrics: {@code ledger_commands_total} by outcome (applied,
 * refused, replayed, key-reused, redelivered, dead-lettered, the last also by {@code problem}).
 */
@ApplicationScoped
public class CommandMetrics {
    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    public CommandMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A command settled with the engine's outcome (published and acknowledged). */
    public void settled(Outcome outcome) {
        if (outcome instanceof Outcome.Recorded recorded) {
            count(recorded.replayed() ? "replayed" : recorded.response().status() == 201 ? "applied" : "refused", null);
        } else if (outcome instanceof Outcome.KeyReused) {
            count("key-reused", null);
        }
    }

    /** A command given back to the broker to be delivered again. */
    public void redelivered() {
        count("redelivered", null);
    }

    public void deadLettered(String problem) {
        count("dead-lettered", problem);
    }

    private void count(String outcome, String problem) {
        counters.computeIfAbsent(outcome + "/" + problem, ignored -> {
            // one set of tag keys for every series of a name (Prometheus refuses two): problem "none" but for dead letters
            return Counter.builder("ledger.commands").tag("outcome", outcome).tag("problem", problem == null ? "none" : problem)
                    .description("Payment commands from the broker, by what became of them").register(registry);
        }).increment();
    }
}
