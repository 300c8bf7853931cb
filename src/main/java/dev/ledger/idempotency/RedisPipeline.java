package dev.ledger.idempotency;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Sends the Redis commands that one Vert.x event loop issues during one turn as one pipelined
 * write: the first command of a turn schedules a flush at the end of the turn (after the loop has
 * handled every socket that was ready), and the flush sends what has gathered by then as one
 * batch on one pooled connection. Under load a write carries several commands, so the service
 * makes one system call, and Redis one read, where it made one per command (README, Performance:
 * a replay's CPU fell by about 40%). Each command keeps its own reply, in order. A command issued
 * off an event loop (a worker or a test thread) is sent at once, alone.
 *
 * <p>A batch that fails as a whole (an error reply to any of its commands, such as NOSCRIPT after
 * Redis lost its script cache, or a lost connection) loses the replies of the commands that did
 * run. So each of its commands is sent again alone, through the usual path. That is safe because
 * every script of this service may run twice for the same request: {@code reserve.lua} answers
 * ACQUIRED again to the owner token that holds the key, and {@code complete.lua} and
 * {@code release.lua} do nothing for an owner that no longer holds it. A command whose caller
 * has given up (its deadline passed) is not sent at all.
 */
@ApplicationScoped
public class RedisPipeline {
    private static final ThreadLocal<List<Pending>> TURN = ThreadLocal.withInitial(ArrayList::new);

    private final Redis redis;
    private final LongAdder writes = new LongAdder();
    private final LongAdder commands = new LongAdder();

    public RedisPipeline(Redis redis) {
        this.redis = redis;
    }

    /** In /q/metrics: {@code ledger_redis_commands_total} over {@code ledger_redis_writes_total} is the mean batch. */
    @Produces
    @Singleton
    MeterBinder pipelineMetrics() {
        return registry -> {
            FunctionCounter.builder("ledger.redis.writes", writes, LongAdder::sum)
                    .description("Writes of Redis commands by the idempotency store (a batch is one)")
                    .register(registry);
            FunctionCounter.builder("ledger.redis.commands", commands, LongAdder::sum)
                    .description("Redis commands sent by the idempotency store, resent ones included")
                    .register(registry);
        };
    }

    Uni<Response> send(Request request) {
        // where the call is subscribed, which is where its reply is wanted
        return Uni.createFrom().deferred(() -> {
            Context current = Vertx.currentContext();
            if (!(current instanceof ContextInternal context) || !context.isEventLoopContext()
                    || !context.nettyEventLoop().inEventLoop()) {
                return alone(request);
            }
            return Uni.createFrom().emitter(emitter -> {
                List<Pending> turn = TURN.get();
                turn.add(new Pending(request, emitter, context));
                if (turn.size() == 1) {
                    context.runOnContext(ignored -> flush());
                }
            });
        });
    }

    /** Commands sent so far, and the writes that carried them: the ratio is the mean batch. */
    public long commandsSent() {
        return commands.sum();
    }

    public long writesMade() {
        return writes.sum();
    }

    private void flush() {
        List<Pending> turn = TURN.get();
        List<Pending> batch = new ArrayList<>(turn.size());
        List<Request> requests = new ArrayList<>(turn.size());
        for (Pending pending : turn) {
            if (pending.wanted()) {
                batch.add(pending);
                requests.add(pending.request());
            }
        }
        turn.clear();
        if (batch.size() <= 1) {
            batch.forEach(this::sendAlone);
            return;
        }
        writes.increment();
        commands.add(requests.size());
        redis.batch(requests).subscribe().with(replies -> {
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).complete(replies.get(i));
            }
        }, failure -> {
            for (Pending pending : batch) {
                if (pending.wanted()) {
                    sendAlone(pending);
                }
            }
        });
    }

    private void sendAlone(Pending pending) {
        alone(pending.request()).subscribe().with(pending::complete, pending::fail);
    }

    private Uni<Response> alone(Request request) {
        return Uni.createFrom().deferred(() -> {
            writes.increment();
            commands.increment();
            return redis.send(request);
        });
    }

    /**
     * A command waiting for the end of the turn, and its caller. The reply goes to the caller on
     * the caller's own Vert.x context (the request's duplicated context), inline on this thread:
     * the batch's replies arrive on the context of whichever caller's turn sent it.
     */
    private static final class Pending {
        private final Request request;
        private final UniEmitter<? super Response> emitter;
        private final ContextInternal context;
        /** Set when the caller gives up before a reply (only this class completes the emitter). */
        private volatile boolean abandoned;

        Pending(Request request, UniEmitter<? super Response> emitter, ContextInternal context) {
            this.request = request;
            this.emitter = emitter;
            this.context = context;
            emitter.onTermination(() -> abandoned = true);
        }

        Request request() {
            return request;
        }

        void complete(Response reply) {
            context.emit(reply, emitter::complete);
        }

        void fail(Throwable failure) {
            context.emit(failure, emitter::fail);
        }

        /** Whether anyone still waits for the reply. */
        boolean wanted() {
            return !abandoned;
        }
    }
}
