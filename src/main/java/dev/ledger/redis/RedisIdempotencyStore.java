package dev.ledger.redis;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.IdempotencyStore;
import dev.ledger.idempotency.InFlightKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.Reservation;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The idempotency store in Redis: each operation one atomic Lua script ({@code src/main/resources/redis/},
 * which owns the TTLs, the state transitions and the owner checks), through {@link RedisCalls}. A key is
 * the hash {@code idem:{<key id>}}: the braces make the id a Redis Cluster hash tag, so each key lives in
 * one slot and each script touches one shard.
 */
@ApplicationScoped
@Typed(RedisIdempotencyStore.class) // the engine gets the store chosen by ledger.idempotency.store (dev.ledger.fastpath)
public class RedisIdempotencyStore implements IdempotencyStore {
    /** Where complete.lua and release.lua announce that a key settled ({@link RedisSettledKeys} listens). */
    static final String SETTLED_CHANNEL = "ledger:idempotency:settled";
    private static final String PREFIX = "idem:{";

    private final RedisCalls redis;
    private final long leaseMillis;
    private final long retentionMillis;
    private final LuaScript reserve = LuaScript.load("reserve.lua");
    private final LuaScript complete = LuaScript.load("complete.lua");
    private final LuaScript release = LuaScript.load("release.lua");
    private final LuaScript state = LuaScript.load("state.lua");

    public RedisIdempotencyStore(RedisCalls redis, LedgerConfig config) {
        this.redis = redis;
        this.leaseMillis = config.idempotency().lease().toMillis();
        this.retentionMillis = config.idempotency().retention().toMillis();
    }

    /** The Redis key of a request's idempotency key. */
    public static String key(IdempotentRequest request) {
        return key(request.keyId());
    }

    static String key(String keyId) {
        return PREFIX + keyId + "}";
    }

    /** The key id of a Redis key, as {@link #key} made it; null for any other name. */
    static String keyId(String redisKey) {
        return redisKey.startsWith(PREFIX) && redisKey.endsWith("}") ? redisKey.substring(PREFIX.length(), redisKey.length() - 1) : null;
    }

    @Override
    public String name() {
        return "Redis";
    }

    @Override
    public Uni<Reservation> reserve(IdempotentRequest request, String owner) {
        return redis.run(reserve, key(request), request.fingerprint().hex(), owner, Long.toString(leaseMillis),
                        request.path(), Long.toString(System.currentTimeMillis()))
                .map(reply -> decode(strings(reply), owner));
    }

    @Override
    public Uni<Boolean> complete(IdempotentRequest request, String owner, RecordedResponse response) {
        return redis.settle(complete, key(request), owner, request.fingerprint().hex(), Long.toString(retentionMillis),
                        Integer.toString(response.status()), response.contentType(),
                        response.location() == null ? "" : response.location(),
                        new String(response.body(), StandardCharsets.UTF_8), SETTLED_CHANNEL,
                        response.expiresAt() == null ? "" : Long.toString(response.expiresAt().toEpochMilli()))
                .map(reply -> reply.toInteger() == 1);
    }

    @Override
    public Uni<Boolean> release(IdempotentRequest request, String owner) {
        return redis.settle(release, key(request), owner, SETTLED_CHANNEL).map(reply -> reply.toInteger() == 1);
    }

    @Override
    public Uni<InFlightKey> inFlight(String keyId) {
        return redis.run(state, key(keyId)).map(reply -> reply == null ? null : held(strings(reply), System.currentTimeMillis()));
    }

    /** The state script's reply for a key that exists, its elements as strings; see {@code redis/state.lua}. */
    static InFlightKey held(List<String> reply, long now) {
        if (!"PROCESSING".equals(reply.get(0))) {
            return null;
        }
        // PTTL answers -1 for a key without expiry: never the case for a lease; treat as ending now
        long leaseEnd = now + Math.max(0, Long.parseLong(reply.get(1)));
        return new InFlightKey(reply.get(2).isEmpty() ? null : reply.get(2),
                reply.get(3).isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(reply.get(3))), Instant.ofEpochMilli(leaseEnd));
    }

    /** The reserve script's reply, its elements as strings (nil as null); see {@code redis/reserve.lua}. */
    static Reservation decode(List<String> reply, String owner) {
        if (reply.isEmpty()) {
            throw new IllegalArgumentException("Empty reply from the reserve script");
        }
        switch (reply.get(0)) {
            case "ACQUIRED":
                return new Reservation.Acquired(owner);
            case "COMPLETED":
                if (reply.size() != 6) {
                    throw new IllegalArgumentException("COMPLETED needs 5 fields, got " + (reply.size() - 1));
                }
                String location = reply.get(3) == null || reply.get(3).isEmpty() ? null : reply.get(3);
                // a key the previous version completed has no expiry kept: its replay goes without one
                String keptUntil = reply.get(5);
                return new Reservation.Completed(new RecordedResponse(Integer.parseInt(reply.get(1)), reply.get(2), location,
                        reply.get(4).getBytes(StandardCharsets.UTF_8),
                        keptUntil == null || keptUntil.isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(keptUntil))));
            case "IN_PROGRESS":
                // PTTL answers -1 for a key without expiry: never the case for a lease; treat as 0
                return new Reservation.InProgress(Math.max(0, Long.parseLong(reply.get(1))));
            case "MISMATCH":
                return new Reservation.Mismatch();
            default:
                throw new IllegalArgumentException("Unknown reply from the reserve script: " + reply.get(0));
        }
    }

    private static List<String> strings(Response reply) {
        List<String> out = new ArrayList<>(reply.size());
        for (int i = 0; i < reply.size(); i++) {
            Response element = reply.get(i);
            out.add(element == null ? null : element.toString());
        }
        return out;
    }
}
