package dev.ledger.dynamodb;

import dev.ledger.idempotency.SettledKeys;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;

import java.util.function.Consumer;

/**
 * Settled keys with DynamoDB: the keys this instance completes or releases, announced to its own
 * waiters at once. DynamoDB has no publish/subscribe; its Streams would do it across instances, at the
 * price of every instance reading every shard of the table's stream (and dynalite has none). So a
 * waiter on another instance than the original's learns of it from {@code KeyWaiters}' recheck: every
 * {@code ledger.idempotency.wait-recheck} (1 s), one consistent read per waited-on key (not per waiter),
 * while anything waits (docs/dynamodb.md, "Waiting for an original").
 */
@ApplicationScoped
@Typed(DynamoDbSettledKeys.class)
public class DynamoDbSettledKeys implements SettledKeys {
    private volatile Consumer<String> listener = ignored -> {
    };

    @Override
    public void listen(Consumer<String> listener) {
        this.listener = listener;
    }

    /** A key this instance settled. */
    void announce(String keyId) {
        listener.accept(keyId);
    }
}
