package dev.ledger.dependency;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Gathers the calls to a dependency that one Vert.x event loop makes during one turn and sends
 * them as one batch: the first call of a turn schedules a flush at the end of the turn (after the
 * loop has handled every socket that was ready), and the flush sends what has gathered by then.
 * Under load a batch carries several calls, so the service makes one write, and the dependency
 * one read, where each call made its own (docs/performance.md). Each caller gets its own result,
 * on its own Vert.x (duplicated) context. A call made off an event loop (a worker or a test
 * thread), or alone in its turn, is sent alone. Calls bound for different destinations (the
 * primaries of a Redis Cluster, say: {@link #destination}) leave as one batch per destination.
 *
 * <p>A call whose caller has given up before the flush (its deadline passed) is not sent. The
 * batch runs on a Vert.x context of its own, so that nothing a caller keeps in its context (a
 * Hibernate Reactive session, say) is shared with it.
 *
 * @param <C> a call
 * @param <R> its result
 */
public abstract class TurnBatcher<C, R> {
    private final ThreadLocal<List<Pending<C, R>>> turn = ThreadLocal.withInitial(ArrayList::new);
    private final LongAdder sends = new LongAdder();
    private final LongAdder calls = new LongAdder();

    /** Sends the calls, all bound for one destination, as one batch; the results in the calls' order. */
    protected abstract Uni<List<R>> batch(List<C> calls);

    /** Where a call goes; calls of a turn with equal destinations share a batch. One destination unless overridden. */
    protected Object destination(C call) {
        return this;
    }

    /** Sends one call on its own (called through {@link #sendAlone}, which counts it). */
    protected abstract Uni<R> alone(C call);

    /** What a call of a batch that failed as a whole gets: the batch's failure, unless overridden. */
    protected Uni<R> afterFailedBatch(C call, Throwable failure) {
        return Uni.createFrom().failure(failure);
    }

    /** The call sent on its own, and counted. */
    protected Uni<R> sendAlone(C call) {
        return Uni.createFrom().deferred(() -> {
            sends.increment();
            calls.increment();
            return alone(call);
        });
    }

    /** Calls sent so far, and the sends (a batch, or a call alone) that carried them: the ratio is the mean batch. */
    public long callsSent() {
        return calls.sum();
    }

    public long sendsMade() {
        return sends.sum();
    }

    /** The two counts as Micrometer counters (shown as {@code <name>_total} in /q/metrics). */
    protected MeterBinder counters(String callsName, String callsText, String sendsName, String sendsText) {
        return registry -> {
            FunctionCounter.builder(callsName, calls, LongAdder::sum).description(callsText).register(registry);
            FunctionCounter.builder(sendsName, sends, LongAdder::sum).description(sendsText).register(registry);
        };
    }

    /** The call's result, from the batch of the caller's event-loop turn (subscribed where the result is wanted). */
    protected Uni<R> submit(C call) {
        return Uni.createFrom().deferred(() -> {
            Context current = Vertx.currentContext();
            if (!(current instanceof ContextInternal context) || !context.isEventLoopContext()
                    || !context.nettyEventLoop().inEventLoop()) {
                return sendAlone(call);
            }
            return Uni.createFrom().emitter(emitter -> {
                List<Pending<C, R>> gathered = turn.get();
                gathered.add(new Pending<>(call, emitter, context));
                if (gathered.size() == 1) {
                    ContextInternal own = context.duplicate();
                    VertxContextSafetyToggle.setContextSafe(own, true);
                    own.runOnContext(ignored -> flush());
                }
            });
        });
    }

    private void flush() {
        List<Pending<C, R>> gathered = turn.get();
        List<Pending<C, R>> wanted = gathered.stream().filter(Pending::wanted).toList();
        gathered.clear();
        if (wanted.size() <= 1) {
            wanted.forEach(pending -> pending.deliver(sendAlone(pending.call)));
            return;
        }
        Object first = destination(wanted.get(0).call);
        if (wanted.stream().allMatch(pending -> destination(pending.call).equals(first))) {
            send(wanted);
            return;
        }
        Map<Object, List<Pending<C, R>>> byDestination = new LinkedHashMap<>();
        for (Pending<C, R> pending : wanted) {
            byDestination.computeIfAbsent(destination(pending.call), ignored -> new ArrayList<>()).add(pending);
        }
        byDestination.values().forEach(this::send);
    }

    /** One destination's calls of the turn: a batch, or the call alone; each caller gets its own result. */
    private void send(List<Pending<C, R>> wanted) {
        if (wanted.size() == 1) {
            wanted.get(0).deliver(sendAlone(wanted.get(0).call));
            return;
        }
        sends.increment();
        calls.add(wanted.size());
        batch(wanted.stream().map(pending -> pending.call).toList()).subscribe().with(results -> {
            for (int i = 0; i < wanted.size(); i++) {
                wanted.get(i).complete(results.get(i));
            }
        }, failure -> {
            for (Pending<C, R> pending : wanted) {
                if (pending.wanted()) {
                    pending.deliver(afterFailedBatch(pending.call, failure));
                }
            }
        });
    }

    /**
     * A call waiting for the end of the turn, and its caller. The result goes to the caller on the
     * caller's own Vert.x context, inline on this thread (every context of a turn is on one loop).
     */
    private static final class Pending<C, R> {
        private final C call;
        private final UniEmitter<? super R> emitter;
        private final ContextInternal context;
        /** Set when the caller gives up before a result (only this class completes the emitter). */
        private volatile boolean abandoned;

        Pending(C call, UniEmitter<? super R> emitter, ContextInternal context) {
            this.call = call;
            this.emitter = emitter;
            this.context = context;
            emitter.onTermination(() -> abandoned = true);
        }

        void deliver(Uni<R> result) {
            result.subscribe().with(this::complete, this::fail);
        }

        void complete(R result) {
            context.emit(result, emitter::complete);
        }

        void fail(Throwable failure) {
            context.emit(failure, emitter::fail);
        }

        /** Whether anyone still waits for the result. */
        boolean wanted() {
            return !abandoned;
        }
    }
}
