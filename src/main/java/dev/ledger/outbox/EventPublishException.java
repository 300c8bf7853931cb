package dev.ledger.outbox;

/** A batch the broker did not confirm in full: the first {@link #confirmed()} events were confirmed, in order. */
public class EventPublishException extends RuntimeException {
    private final int confirmed;

    public EventPublishException(int confirmed, String message, Throwable cause) {
        super(message, cause);
        this.confirmed = confirmed;
    }

    public int confirmed() {
        return confirmed;
    }
}
