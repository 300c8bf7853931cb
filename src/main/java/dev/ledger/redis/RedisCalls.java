package dev.ledger.redis;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Breakers;
import dev.ledger.dependency.GuardedCalls;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * The one way a script reaches Redis: to the node that serves its key ({@link RedisNodes}), with the
 * commands of the same event-loop turn ({@link RedisPipeline}), through that node's circuit breaker, bounded
 * by {@code ledger.fast-path.timeout} and timed and traced ({@link GuardedCalls}, as every store's calls are),
 * so that a slow or absent Redis fails fast and requests go on through Postgres. While a breaker is open, a
 * call to its node fails at once ({@link Breakers#refused}) and sends nothing, except a call that settles a
 * key a request holds ({@link #settle}). Redis error replies become exceptions: they are Throwables but not
 * Exceptions, which a caller's failure handling would not see.
 */
@ApplicationScoped
public class RedisCalls {
    /** A Redis call's bound while {@code ledger.fast-path.timeout} is unset. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(300);
    /** The script a traced call ran ({@link dev.ledger.tracing.ClientSpans}): reserve, complete, release. */
    private static final AttributeKey<String> SCRIPT = AttributeKey.stringKey("ledger.redis.script");
    private final RedisPipeline pipeline;
    private final RedisNodes nodes;
    private final GuardedCalls calls;

    public RedisCalls(RedisPipeline pipeline, RedisNodes nodes, LedgerConfig config, MeterRegistry registry, Tracer tracer) {
        this.pipeline = pipeline;
        this.nodes = nodes;
        this.calls = new GuardedCalls("redis", "Redis", config.fastPath().timeout().orElse(DEFAULT_TIMEOUT), SCRIPT,
                registry, tracer);
    }

    /** Runs {@code script} on {@code key}, unless the key's node breaker is open. */
    public Uni<Response> run(LuaScript script, String key, String... args) {
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
    public Uni<Response> settle(LuaScript script, String key, String... args) {
        return call(true, script, key, args);
    }

    private Uni<Response> call(boolean evenIfOpen, LuaScript script, String key, String... args) {
        RedisNode node = nodes.nodeFor(key);
        return calls.call(node.breaker(), evenIfOpen, script.name().replace(".lua", ""), "EVALSHA", script.name(),
                node.address(), () -> send(node, script, key, args));
    }
    /** By SHA-1; the whole script after NOSCRIPT, which is that node's own answer, so the EVAL goes there too. */
    private Uni<Response> send(RedisNode node, LuaScript script, String key, String[] args) {
        return pipeline.send(node, key, script.bySha(key, args))
                .onFailure(RedisCalls::isNoScript)
                .recoverWithUni(() -> pipeline.send(node, key, script.whole(key, args)))
                .onFailure(failure -> !(failure instanceof Exception))
                .transform(RedisReplyException::new);
    }

    private static boolean isNoScript(Throwable failure) {
        return failure.getMessage() != null && failure.getMessage().startsWith("NOSCRIPT");
    }

    /** A Redis error reply, as an Exception. */
    static final class RedisReplyException extends RuntimeException {
        RedisReplyException(Throwable reply) {
            super("Redis replied " + reply.getMessage());
        }
    }
}
