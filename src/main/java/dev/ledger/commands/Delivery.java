package dev.ledger.commands;

import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.RecordedResponse;
import io.smallrye.mutiny.Uni;

/**
 * One delivery of a command, as a broker's adapter hands it to the {@link CommandDoor}: what it carries, and
 * what the broker can do with it. The door decides which of these happen, and in what order; the adapter only
 * knows how its broker does each. Every {@code Uni} completes once the broker confirmed (or acknowledged) it.
 */
public interface Delivery {
    /** The broker, as metrics and traces name it ({@code rabbitmq}, {@code kafka}). */
    String transport();

    /** Where the command came from (a queue, a topic), as traces name it. */
    String destination();

    /** The trace the command continues: its {@code receive} span's context, or null while nothing is recorded. */
    io.opentelemetry.context.Context received();

    /** What the message carries. */
    CommandEnvelope envelope();

    /** Refuses ({@link CommandRefused}) a command its broker's envelope contradicts (a Kafka record's key). */
    default void check(Command command) {
    }

    /** The number of this delivery's first attempt: 1, or more for a delivery the broker counts as redelivered. */
    int firstAttempt();

    /** The command's outcome to where its sender reads outcomes. */
    Uni<Void> publish(Command command, Outcome outcome);

    /** The 400 of a command that could not be read, to where its sender reads outcomes (when there is such a place). */
    Uni<Void> refuse(CommandRefused refused, RecordedResponse problem);

    /** The message as it arrived, with its reason ({@code x-ledger-problem}), to the dead letters. */
    Uni<Void> deadLetter(String slug);

    /** The message is settled: the broker may forget it. Nothing after this may give it back. */
    Uni<Void> acknowledge();

    /**
     * After this failed {@code attempt}, waits its back-off and answers whether to run the command again now
     * (retried in place), or gives the message back to the broker, which delivers it again (false); false too when
     * the message is no longer this instance's (a Kafka partition revoked).
     */
    Uni<Boolean> retry(int attempt);

    /**
     * A command of {@code client} met an unavailable dependency (Redis failing closed, the client's PostgreSQL shard):
     * the adapter may pause consuming.
     */
    default void unavailable(String client) {
    }

    /** A command of {@code client}'s dependencies answered. */
    default void available(String client) {
    }
}
