package dev.ledger.idempotency;

import java.util.function.Consumer;

/**
 * How the store tells every instance that keys settled (completed, or given back), so that requests
 * waiting for an in-flight original ({@link KeyWaiters}) are woken without asking the store per waiter
 * in a loop. Best effort: a notice may be missed (the store was away), which {@link KeyWaiters} covers
 * by looking at each waited-on key now and then.
 */
public interface SettledKeys {
    /**
     * Delivers the {@link IdempotentRequest#keyId} of every key that settles, on any instance, to
     * {@code listener}, from now on; called again while nothing is delivered (the notices were lost), it
     * tries again. Cheap when notices already flow.
     */
    void listen(Consumer<String> listener);
}
