package dev.ledger.fastpath;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dynamodb.DynamoDbIdempotencyStore;
import dev.ledger.dynamodb.DynamoDbSettledKeys;
import dev.ledger.dynamodb.DynamoDbTable;
import dev.ledger.idempotency.IdempotencyStore;
import dev.ledger.idempotency.SettledKeys;
import dev.ledger.redis.RedisIdempotencyStore;
import dev.ledger.redis.RedisNodes;
import dev.ledger.redis.RedisSettledKeys;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;

/**
 * The fast path's store, chosen at start by {@code ledger.idempotency.store}: Redis ({@code dev.ledger.redis})
 * or DynamoDB ({@code dev.ledger.dynamodb}), given to the engine as its {@link IdempotencyStore} and
 * {@link SettledKeys}. The other store's beans are looked up lazily and never made: with DynamoDB no
 * Redis connection is opened (nor needed), and with Redis no AWS client exists.
 */
@ApplicationScoped
public class FastPath {
    private final boolean dynamodb;

    public FastPath(LedgerConfig config) {
        this.dynamodb = config.idempotency().store() == LedgerConfig.Idempotency.Store.DYNAMODB;
    }

    /** Whether the store is DynamoDB. */
    public boolean dynamodb() {
        return dynamodb;
    }

    @Produces
    @ApplicationScoped
    IdempotencyStore store(Instance<RedisIdempotencyStore> redis, Instance<DynamoDbIdempotencyStore> dynamo) {
        return dynamodb ? dynamo.get() : redis.get();
    }

    @Produces
    @ApplicationScoped
    SettledKeys settledKeys(Instance<RedisSettledKeys> redis, Instance<DynamoDbSettledKeys> dynamo) {
        return dynamodb ? dynamo.get() : redis.get();
    }

    /** At start: Redis' slot map, or DynamoDB's table (created when missing and allowed). */
    void start(@Observes StartupEvent started, Instance<RedisNodes> redis, Instance<DynamoDbTable> table) {
        if (dynamodb) {
            table.get().prepare();
        } else {
            redis.get().start();
        }
    }
}
