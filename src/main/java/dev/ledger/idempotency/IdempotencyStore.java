package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fast path of idempotency, in Redis: reserve, complete and release, each one atomic Lua
 * call through {@link RedisScripts} (bounded, behind the circuit breaker {@code redis}).
 * Redis may forget anything at any time; Postgres decides.
 */
@ApplicationScoped
public class IdempotencyStore {
    /** Where complete.lua and release.lua announce that a key settled ({@link KeyWaiters} listens). */
    public static final String SETTLED_CHANNEL = "ledger:idempotency:settled";

    private final RedisScripts redis;
    private final LedgerConfig config;
    private final LuaScript reserveScript;
    private final LuaScript completeScript;
    private final LuaScript releaseScript;
    private final LuaScript stateScript;
    private final String ownerPrefix;
    private final AtomicLong ownerCounter = new AtomicLong();

    public IdempotencyStore(RedisScripts redis, LedgerConfig config) {
        this.redis = redis;
        this.config = config;
        // Per instance, not static: the native-image builder initialises classes at build time and
        // would bake a static random id into the image, the same for every process.
        this.ownerPrefix = UUID.randomUUID() + ":";
        // Read here, at run time, the same way on the JVM and in a native executable (from the
        // resources quarkus.native.resources.includes puts in the image). Static fields would be
        // read by the native-image builder, which initialises classes at build time, through
        // whatever class loader it has then, and baked into the image.
        this.reserveScript = LuaScript.load("reserve.lua");
        this.completeScript = LuaScript.load("complete.lua");
        this.releaseScript = LuaScript.load("release.lua");
        this.stateScript = LuaScript.load("state.lua");
    }

    /** Reserves the key for {@code owner}, a fresh token (see {@link #newOwner()}). */
    public Uni<Reservation> reserve(IdempotentRequest request, String owner) {
        return redis.run(reserveScript, request.redisKey(), request.fingerprint().hex(), owner,
                        Long.toString(config.idempotency().lease().toMillis()))
                .map(reply -> Reservation.decode(strings(reply), owner));
    }

    /**
     * A token that fences one request's writes to its key: this process's random id and a
     * counter, unique across processes and never repeated within one. Not {@code UUID.randomUUID()}
     * per request: that reads the blocking-free but locked system random source every time (about
     * 1% of a replay's CPU, docs/performance.md); the token needs uniqueness, not secrecy.
     */
    public String newOwner() {
        return ownerPrefix + Long.toHexString(ownerCounter.incrementAndGet());
    }

    /**
     * Records the committed answer if {@code owner} still holds the key or the key is free;
     * never over another owner's state. Answers whether it was written. Sent even while the
     * breaker is open ({@link RedisScripts#settle}), as is {@link #release}.
     */
    public Uni<Boolean> complete(IdempotentRequest request, String owner, RequestFingerprint fingerprint,
                                 RecordedResponse response) {
        return redis.settle(completeScript, request.redisKey(), owner, fingerprint.hex(),
                        Long.toString(config.idempotency().retention().toMillis()),
                        Integer.toString(response.status()), response.contentType(),
                        response.location() == null ? "" : response.location(),
                        new String(response.body(), StandardCharsets.UTF_8), SETTLED_CHANNEL)
                .map(reply -> reply.toInteger() == 1);
    }

    /** Frees the key if {@code owner} still holds it, so that a retry executes afresh. */
    public Uni<Boolean> release(IdempotentRequest request, String owner) {
        return redis.settle(releaseScript, request.redisKey(), owner, SETTLED_CHANNEL).map(reply -> reply.toInteger() == 1);
    }

    /** Whether a key is still held by an in-flight request (false when completed or free). */
    public Uni<Boolean> inFlight(String redisKey) {
        return redis.run(stateScript, redisKey).map(reply -> reply != null && "PROCESSING".equals(reply.toString()));
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
