package dev.ledger.commands;

/** The header names every broker door gives its outcomes and dead letters (docs/api.md). */
public final class CommandHeaders {
    /** The HTTP status of the outcome's body. */
    public static final String STATUS = "ledger-status";
    /** The command's idempotency key. */
    public static final String KEY = "idempotency-key";
    /** {@code true} on an outcome that is a replay of the recorded one. */
    public static final String REPLAYED = "idempotent-replayed";
    /** Why a command was dead-lettered: a problem type's slug. */
    public static final String PROBLEM = "x-ledger-problem";

    private CommandHeaders() {
    }
}
