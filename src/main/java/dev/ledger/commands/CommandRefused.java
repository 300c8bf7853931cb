package dev.ledger.commands;

import dev.ledger.problem.ProblemException;

/**
 * A command that cannot be executed, and why: its problem's slug is the dead letter's reason. Whether its
 * 400 is answered ({@code answerable}) depends on who sent it: never to a sender the service does not know.
 * It keeps what of the command could be read, so that the refusal names it (the key, the correlation).
 */
public final class CommandRefused extends RuntimeException {
    private final transient ProblemException problem;
    private final boolean answerable;
    private final String key;
    private final String correlationId;

    public CommandRefused(ProblemException problem, boolean answerable, String key, String correlationId) {
        super(problem.getMessage(), null, false, false);
        this.problem = problem;
        this.answerable = answerable;
        this.key = key;
        this.correlationId = correlationId;
    }

    public ProblemException problem() {
        return problem;
    }

    /** Whether the sender may be answered with the 400 (a known client). */
    public boolean answerable() {
        return answerable;
    }

    /** The key as sent, or null. */
    public String key() {
        return key;
    }

    /** The command's correlation: the one sent, else its key as sent, else null. */
    public String correlationId() {
        return correlationId;
    }

    public String slug() {
        return problem.problem().type().slug();
    }
}
