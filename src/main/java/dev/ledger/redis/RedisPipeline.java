package dev.ledger.redis;

import dev.ledger.dependency.TurnBatcher;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.List;

/**
 * Sends the Redis commands that one Vert.x event loop issues during one turn as one pipelined
 * write per Redis node ({@link TurnBatcher}): one batch on one pooled connection to the node that
 * serves the commands' keys (the one server, or each primary of a Redis Cluster, {@link RedisNodes}).
 * Under load a write carries several commands, so the service makes one system call, and Redis one
 * read, where it made one per command (docs/performance.md). Each command keeps its own reply, in
 * order.
 *
 * <p>A batch that fails as a whole (an error reply to any of its commands, such as NOSCRIPT after
 * Redis lost its script cache or MOVED after a failover, or a lost connection) loses the replies of
 * the commands that did run. So each of its commands is sent again alone, to the node that serves
 * its key now, following a redirection. That is safe because every script of this service may run
 * twice for the same request: {@code reserve.lua} answers ACQUIRED again to the owner token that
 * holds the key, and {@code complete.lua} and {@code release.lua} do nothing for an owner that no
 * longer holds it. A command whose caller has given up (its deadline passed) is not sent at all.
 */
@ApplicationScoped
public class RedisPipeline extends TurnBatcher<RedisPipeline.Call, Response> {
    private final RedisNodes nodes;

    public RedisPipeline(RedisNodes nodes) {
        this.nodes = nodes;
    }

    /** A command on one key, and the node chosen for it when it was issued. */
    record Call(String key, RedisNode node, Request request) {
    }

    /** In /q/metrics: {@code ledger_redis_commands_total} over {@code ledger_redis_writes_total} is the mean batch. */
    @Produces
    @Singleton
    MeterBinder pipelineMetrics() {
        return counters("ledger.redis.commands", "Redis commands sent by the idempotency store, resent ones included",
                "ledger.redis.writes", "Writes of Redis commands by the idempotency store (a batch is one)");
    }

    Uni<Response> send(RedisNode node, String key, Request request) {
        return submit(new Call(key, node, request));
    }

    @Override
    protected Object destination(Call call) {
        return call.node();
    }

    @Override
    protected Uni<List<Response>> batch(List<Call> calls) {
        return nodes.batch(calls.get(0).node(), calls.stream().map(Call::request).toList());
    }

    @Override
    protected Uni<Response> alone(Call call) {
        return nodes.send(call.node(), call.request());
    }

    @Override
    protected Uni<Response> afterFailedBatch(Call call, Throwable failure) {
        // the node that serves the key now: the batch's may have failed over
        return sendAlone(new Call(call.key(), nodes.nodeFor(call.key()), call.request()));
    }
}
