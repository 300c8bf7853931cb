package dev.ledger.redis;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotencyStore;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.Reservation;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Leases and fencing of the Redis scripts, against the real (test) Redis database; the same for the DynamoDB
 * store in {@code dev.ledger.dynamodb.DynamoDbIdempotencyStoreTest}, through {@link #stored()}.
 */
@QuarkusTest
public class RedisIdempotencyStoreTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final RecordedResponse ANSWER_A = new RecordedResponse(201, "application/json", "/a",
            "{\"by\":\"a\"}".getBytes(StandardCharsets.UTF_8));
    private static final RecordedResponse ANSWER_B = new RecordedResponse(201, "application/json", "/b",
            "{\"by\":\"b\"}".getBytes(StandardCharsets.UTF_8));

    @Inject
    IdempotencyStore store;

    @Inject
    RedisDataSource redis;

    private static IdempotentRequest request() {
        return IdempotentRequest.of("fencing", new IdempotencyKey(UUID.randomUUID().toString()), "POST", "/x",
                JsonNodeFactory.instance.objectNode());
    }

    private Reservation reserve(IdempotentRequest request, String owner) {
        return store.reserve(request, owner).await().atMost(WAIT);
    }

    /** The store's own view of keys, for what the engine's interface does not show. */
    protected StoredKeys stored() {
        return new StoredKeys() {
            @Override
            public void expire(String keyId) {
                redis.key().del(RedisIdempotencyStore.key(keyId)); // what a lease expiry does: the key vanishes
            }

            @Override
            public String owner(String keyId) {
                return redis.hash(String.class).hget(RedisIdempotencyStore.key(keyId), "owner");
            }

            @Override
            public long remainingMillis(String keyId) {
                return redis.key().pttl(RedisIdempotencyStore.key(keyId));
            }
        };
    }

    /** A store's keys as the test looks at them. */
    public interface StoredKeys {
        /** The key's lease or retention ends now. */
        void expire(String keyId);

        /** The owner token that holds the key. */
        String owner(String keyId);

        /** What remains of its lease or retention. */
        long remainingMillis(String keyId);
    }

    private void expireLease(IdempotentRequest request) {
        stored().expire(request.keyId());
    }

    @Test
    void aRequestWhoseLeaseExpiredCannotOverwriteTheNewOwner() {
        IdempotentRequest request = request();
        assertInstanceOf(Reservation.Acquired.class, reserve(request, "A"));
        expireLease(request);
        assertInstanceOf(Reservation.Acquired.class, reserve(request, "B"));

        assertFalse(store.complete(request, "A", ANSWER_A).await().atMost(WAIT));
        assertFalse(store.release(request, "A").await().atMost(WAIT));
        assertEquals("B", stored().owner(request.keyId()));
        assertInstanceOf(Reservation.InProgress.class, reserve(request, "C"));

        assertTrue(store.complete(request, "B", ANSWER_B).await().atMost(WAIT));
        Reservation replay = reserve(request, "D");
        assertEquals(ANSWER_B, assertInstanceOf(Reservation.Completed.class, replay).response());
        // a late writer cannot replace a completed answer either
        assertFalse(store.complete(request, "A", ANSWER_A).await().atMost(WAIT));
        assertFalse(store.release(request, "B").await().atMost(WAIT)); // completed keys are not released
        assertEquals(ANSWER_B, ((Reservation.Completed) reserve(request, "E")).response());
    }

    @Test
    void theLeaseIsTheConfiguredTtlAndInProgressReportsWhatRemains() {
        IdempotentRequest request = request();
        reserve(request, "A");
        long ttl = stored().remainingMillis(request.keyId());
        assertTrue(ttl > 25_000 && ttl <= 30_000, "lease ttl " + ttl);
        Reservation.InProgress inProgress = assertInstanceOf(Reservation.InProgress.class, reserve(request, "B"));
        assertTrue(inProgress.retryAfterSeconds() >= 26 && inProgress.retryAfterSeconds() <= 30);
    }

    @Test
    void aCommittedAnswerFillsAFreeKeyAndKeepsTheRetention() {
        IdempotentRequest request = request();
        assertTrue(store.complete(request, "never-reserved", ANSWER_A).await().atMost(WAIT));
        long ttl = stored().remainingMillis(request.keyId());
        assertTrue(ttl > Duration.ofHours(23).toMillis(), "retention ttl " + ttl);
        assertEquals(ANSWER_A, ((Reservation.Completed) reserve(request, "X")).response());
    }

    @Test
    void theOwnerThatHoldsAKeyAcquiresItAgainAndNoOtherDoes() {
        // what a resent batch does (RedisPipeline): the same reservation, sent twice
        IdempotentRequest request = request();
        assertInstanceOf(Reservation.Acquired.class, reserve(request, "A"));
        assertInstanceOf(Reservation.Acquired.class, reserve(request, "A"));
        assertInstanceOf(Reservation.InProgress.class, reserve(request, "B"));
        assertTrue(store.complete(request, "A", ANSWER_A).await().atMost(WAIT));
        // once completed, the owner gets the answer like anyone else, and a resent completion does nothing
        assertEquals(ANSWER_A, assertInstanceOf(Reservation.Completed.class, reserve(request, "A")).response());
        assertFalse(store.complete(request, "A", ANSWER_B).await().atMost(WAIT));
    }

    @Test
    void onlyTheOwnerReleasesAndThenTheKeyIsFree() {
        IdempotentRequest request = request();
        reserve(request, "A");
        assertFalse(store.release(request, "B").await().atMost(WAIT));
        assertTrue(store.release(request, "A").await().atMost(WAIT));
        assertInstanceOf(Reservation.Acquired.class, reserve(request, "B"));
    }
}
