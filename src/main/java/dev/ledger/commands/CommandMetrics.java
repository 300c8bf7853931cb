package dev.ledger.commands;

import dev.ledger.idempotency.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What became of the commands of every broker door, in /q/metrics: {@code ledger_commands_total} by
 * {@code transport} ({@code rabbitmq}, {@code kafka}) and outcome (applied, refused, replayed,
 * key-reused, redelivered (given back to the broker, or retried in place), dead-lettered, the last also
 * by {@code problem}).
 */
@ApplicationScoped
public class CommandMetrics {
    public static final String RABBITMQ = "rabbitmq";
    public static final String KAFKA = "kafka";

    private final MeterRegistry registry;
    /** By transport, then outcome (then problem, for dead letters): found without building a key per command. */
    private final Map<String, Map<String, Map<String, Counter>>> counters = new ConcurrentHashMap<>();

    public CommandMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A command settled with the engine's outcome (published and acknowledged). */
    public void settled(String transport, Outcome outcome) {
        if (outcome instanceof Outcome.Recorded recorded) {
            count(transport, recorded.replayed() ? "replayed" : recorded.response().status() < 300 ? "applied" : "refused", null);
        } else if (outcome instanceof Outcome.KeyReused) {
            count(transport, "key-reused", null);
        }
    }

    /** A command given back to the broker to be delivered again, or to be tried again in place. */
    public void redelivered(String transport) {
        count(transport, "redelivered", null);
    }

    public void deadLettered(String transport, String problem) {
        count(transport, "dead-lettered", problem);
    }

    private void count(String transport, String outcome, String problem) {
        // one set of tag keys for every series of a name (Prometheus refuses two): problem "none" but for dead letters
        String tag = problem == null ? "none" : problem;
        counters.computeIfAbsent(transport, ignored -> new ConcurrentHashMap<>())
                .computeIfAbsent(outcome, ignored -> new ConcurrentHashMap<>())
                .computeIfAbsent(tag, ignored -> Counter.builder("ledger.commands").tag("transport", transport)
                        .tag("outcome", outcome).tag("problem", tag)
                        .description("Payment commands from the brokers, by what became of them").register(registry))
                .increment();
    }
}
