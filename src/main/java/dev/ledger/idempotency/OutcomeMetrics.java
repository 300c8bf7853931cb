package dev.ledger.idempotency;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What the engine answered, door by door, in /q/metrics: {@code ledger_idempotency_requests_seconds}
 * (count, sum and histogram buckets) by {@code transport} and {@link Kind outcome}. A door gets its
 * {@link Door} once and records each engine run on it: the meters are registered up front (every series
 * exists at 0, so a rate over it starts at once), and recording one is an array read.
 */
@ApplicationScoped
public class OutcomeMetrics {
    public static final String NAME = "ledger.idempotency.requests";
    /** Up to the longest wait a request may be allowed ({@code ledger.idempotency.max-wait}). */
    private static final Duration[] BUCKETS = {
            Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30)};

    private final MeterRegistry registry;

    public OutcomeMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The outcome tag: what the engine did with one request. */
    public enum Kind {
        /** Ran the business step, with the store's reservation. */
        EXECUTED("executed"),
        /** The store held the recorded answer. */
        REPLAYED_STORE("replayed-store"),
        /** The store had forgotten the key; Postgres' durable record answered: the backstop saved a duplicate. */
        REPLAYED_POSTGRES("replayed-postgres"),
        /** Another request with the key is in flight; this one did not wait. */
        IN_FLIGHT("in-flight"),
        /** Waited for the in-flight original and replayed its answer. */
        WAITED_REPLAYED("waited-replayed"),
        /** Waited; the original gave the key back, so this one ran the business step. */
        WAITED_EXECUTED("waited-executed"),
        /** Waited its bound and the original was still in flight. */
        WAITED_IN_FLIGHT("waited-in-flight"),
        /** The key was used for another request. */
        KEY_REUSED("key-reused"),
        /** The business step failed (Postgres unavailable): the key was given back and the answer is a 503. */
        RELEASED("released"),
        /** The store could not answer, so Postgres alone decided, and ran the business step. */
        BYPASSED_EXECUTED("bypassed-executed"),
        /** The store could not answer, and Postgres' durable record answered. */
        BYPASSED_REPLAYED("bypassed-replayed"),
        /** Refused before anything ran: the store could not answer and the service fails closed. */
        UNAVAILABLE("unavailable"),
        /** The engine failed (a bug): the key was given back. */
        ERROR("error");

        private final String tag;

        Kind(String tag) {
            this.tag = tag;
        }

        public String tag() {
            return tag;
        }

        public static Kind of(Outcome outcome) {
            if (outcome instanceof Outcome.Recorded recorded) {
                if (recorded.waited() != null) {
                    return recorded.replayed() ? WAITED_REPLAYED : WAITED_EXECUTED;
                }
                if (recorded.storeBypassed()) {
                    return recorded.replayed() ? BYPASSED_REPLAYED : BYPASSED_EXECUTED;
                }
                return switch (recorded.source()) {
                    case EXECUTED -> EXECUTED;
                    case STORE -> REPLAYED_STORE;
                    case POSTGRES -> REPLAYED_POSTGRES;
                };
            }
            if (outcome instanceof Outcome.InFlight inFlight) {
                return inFlight.waited() ? WAITED_IN_FLIGHT : IN_FLIGHT;
            }
            if (outcome instanceof Outcome.KeyReused) {
                return KEY_REUSED;
            }
            return ((Outcome.Unavailable) outcome).released() ? RELEASED : UNAVAILABLE;
        }
    }

    /** The meters of the door {@code transport} ({@code http}, {@code rabbitmq}, {@code kafka}), registered now. */
    public Door door(String transport) {
        Kind[] kinds = Kind.values();
        Timer[] timers = new Timer[kinds.length];
        for (Kind kind : kinds) {
            timers[kind.ordinal()] = Timer.builder(NAME).tag("transport", transport).tag("outcome", kind.tag())
                    .description("Idempotent requests by door and by what the idempotency layer did with them")
                    .serviceLevelObjectives(BUCKETS)
                    .register(registry);
        }
        return new Door(timers);
    }

    /** One door's meters. */
    public static final class Door {
        private final Timer[] timers;

        private Door(Timer[] timers) {
            this.timers = timers;
        }

        /** The engine answered {@code outcome} to a request that began at {@code startNanos} ({@link System#nanoTime}). */
        public void record(Outcome outcome, long startNanos) {
            record(Kind.of(outcome), startNanos);
        }

        /** The engine failed the request that began at {@code startNanos}. */
        public void failed(long startNanos) {
            record(Kind.ERROR, startNanos);
        }

        private void record(Kind kind, long startNanos) {
            timers[kind.ordinal()].record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
        }
    }
}
