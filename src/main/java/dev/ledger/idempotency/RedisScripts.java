package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Deadline;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The one door to Redis: every script call is bounded by a timeout ({@link Deadline}, timed on
 * the caller's event loop) and counted by the circuit breaker of the node that serves its key
 * ({@link RedisNodes}: {@code redis}, or one per primary of a Redis Cluster), so a slow or absent
 * Redis fails fast and the service goes on through Postgres. While a breaker is open, a call to its
 * node fails at once with {@link CallNotPermittedException} and sends nothing, except a call that
 * settles a key a request holds ({@link #settle}).
 *
 * <p>The breaker is Resilience4j's: a state machine the call asks for permission and tells its
 * outcome, on the caller's thread. SmallRye Fault Tolerance's guard, used before, dispatches every
 * guarded call twice more on the Vert.x event loop (on the way in and on the way out); with its
 * timeout that was about a sixth of the CPU of a replay (docs/performance.md).
 */
@ApplicationScoped
public class RedisScripts {
    private final RedisPipeline redis;
    private final RedisNodes nodes;
    private final Duration timeout;

    public RedisScripts(RedisPipeline redis, RedisNodes nodes, LedgerConfig config) {
        this.redis = redis;
        this.nodes = nodes;
        this.timeout = config.redis().timeout();
    }

    Uni<Response> run(LuaScript script, String key, String... args) {
        return call(false, script, key, args);
    }

    /**
     * Runs a script that settles a key a request holds, or may hold ({@code complete.lua},
     * {@code release.lua}): sent even while the breaker is open, since nothing else frees the key
     * before its lease ends, and a key left held answers {@code request-in-progress} to every retry
     * of a request that has its answer. Bounded all the same; counted by the breaker only when it
     * permits the call. Each request settles its key once, and only a request whose reserve was sent
     * holds one, so an outage sends at most the settles of the requests in flight when it began.
     */
    Uni<Response> settle(LuaScript script, String key, String... args) {
        return call(true, script, key, args);
    }

    private Uni<Response> call(boolean evenIfOpen, LuaScript script, String key, String... args) {
        // permission is asked when the call is subscribed, so an unsubscribed call holds none
        return Uni.createFrom().deferred(() -> {
            RedisNode node = nodes.nodeFor(key);
            CircuitBreaker breaker = node.breaker();
            boolean permitted = breaker.tryAcquirePermission();
            if (!permitted && !evenIfOpen) {
                return Uni.createFrom().failure(CallNotPermittedException.createCallNotPermittedException(breaker));
            }
            Uni<Response> bounded = Deadline.within(timeout, "Redis", () -> script.run(redis, node, key, args));
            if (!permitted) {
                return bounded;
            }
            long start = System.nanoTime();
            // the deadline inside the breaker: a timeout counts as a failure
            return bounded
                    .onItemOrFailure().invoke((reply, failure) -> {
                        long nanos = System.nanoTime() - start;
                        if (failure == null) {
                            breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
                        } else {
                            breaker.onError(nanos, TimeUnit.NANOSECONDS, failure);
                        }
                    })
                    .onCancellation().invoke(breaker::releasePermission);
        });
    }

    /** The breaker of the one Redis server (of the first seed node in a cluster), for tests: its state, and {@code reset()} to close it. */
    public CircuitBreaker breaker() {
        return nodes.breaker();
    }
}
