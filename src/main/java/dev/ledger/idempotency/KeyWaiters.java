package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Lets a request wait for an in-flight original with the same key to settle (complete, or give the
 * key back) without holding a thread, a database connection, or asking Redis in a loop.
 *
 * <ul>
 *   <li>The store tells every instance which keys settled ({@link SettledKeys}; in Redis, one
 *       subscription per instance), and every waiter of such a key, on whichever instance, is woken.</li>
 *   <li>A bounded fallback for a wake-up that is missed (the notices were down, the original's
 *       instance died and its lease expired, which announces nothing): every
 *       {@code ledger.idempotency.wait-recheck}, while anything waits, one look per waited-on key (not
 *       per waiter) asks the store whether it is still in flight.</li>
 *   <li>A waiter also wakes at the end of its own bound.</li>
 * </ul>
 * Waking only says "look again": the waiter reserves the key again and acts on what it finds.
 */
@ApplicationScoped
public class KeyWaiters {
    private final SettledKeys settledKeys;
    private final IdempotencyStore store;
    private final Vertx vertx;
    private final long recheckMillis;
    private final Map<String, Set<Waiter>> waiting = new ConcurrentHashMap<>();
    private final Counter wokenByMessage;
    private final Counter wokenByRecheck;
    private final Counter wokenAtBound;
    private volatile long recheckTimer = -1;

    public KeyWaiters(SettledKeys settledKeys, IdempotencyStore store, Vertx vertx, LedgerConfig config, MeterRegistry metrics) {
        this.settledKeys = settledKeys;
        this.store = store;
        this.vertx = vertx;
        this.recheckMillis = config.idempotency().waitRecheck().toMillis();
        Gauge.builder("ledger.idempotency.waiting", waiting, map -> map.values().stream().mapToInt(Set::size).sum())
                .description("Requests waiting for an in-flight original with the same key").register(metrics);
        this.wokenByMessage = wakeups(metrics, "message");
        this.wokenByRecheck = wakeups(metrics, "recheck");
        this.wokenAtBound = wakeups(metrics, "bound");
    }

    private static Counter wakeups(MeterRegistry metrics, String by) {
        return Counter.builder("ledger.idempotency.wakeups").tag("by", by)
                .description("Waiting requests woken: by the settled key's message, by the recheck, or at their bound")
                .register(metrics);
    }

    /**
     * Completes when the key {@code keyId} ({@link IdempotentRequest#keyId}) may have settled, or after
     * {@code bound}, whichever comes first; on the caller's Vert.x context. Never fails.
     */
    public Uni<Void> settled(String keyId, Duration bound) {
        listen();
        Context caller = Vertx.currentContext();
        Uni<Void> woken = Uni.createFrom().emitter(emitter -> {
            Waiter waiter = new Waiter(emitter, caller);
            waiting.computeIfAbsent(keyId, key -> ConcurrentHashMap.newKeySet()).add(waiter);
            emitter.onTermination(() -> forget(keyId, waiter));
            startRecheck();
        });
        var timeout = woken.ifNoItem().after(bound);
        if (caller instanceof ContextInternal internal) {
            timeout = timeout.on(internal.nettyEventLoop());
        }
        return timeout.recoverWithUni(() -> {
            wokenAtBound.increment();
            return Uni.createFrom().voidItem();
        });
    }

    private void forget(String keyId, Waiter waiter) {
        waiting.computeIfPresent(keyId, (key, waiters) -> {
            waiters.remove(waiter);
            return waiters.isEmpty() ? null : waiters;
        });
    }

    /** Wakes every waiter of {@code keyId}. */
    void wake(String keyId, Counter by) {
        Set<Waiter> waiters = waiting.remove(keyId);
        if (waiters != null) {
            waiters.forEach(waiter -> {
                by.increment();
                waiter.wake();
            });
        }
    }

    /** Hears the store's notices of settled keys; asked again while anything waits, in case they were lost. */
    private void listen() {
        settledKeys.listen(keyId -> wake(keyId, wokenByMessage));
    }

    /** While anything waits: one look per waited-on key, every {@code wait-recheck}. */
    private synchronized void startRecheck() {
        if (recheckTimer >= 0) {
            return;
        }
        recheckTimer = vertx.setPeriodic(recheckMillis, id -> {
            if (waiting.isEmpty()) {
                stopRecheck(id);
                return;
            }
            listen();
            for (String key : waiting.keySet()) {
                store.inFlight(key).subscribe().with(held -> {
                    if (held == null) {
                        wake(key, wokenByRecheck);
                    }
                }, failure -> {
                    // Redis away: the waiters wake at their bound, as without waiting
                });
            }
        });
    }

    private synchronized void stopRecheck(long id) {
        if (recheckTimer == id && waiting.isEmpty()) {
            vertx.cancelTimer(id);
            recheckTimer = -1;
        }
    }

    /** A waiting request, woken on its own context. */
    private record Waiter(UniEmitter<? super Void> emitter, Context context) {
        void wake() {
            if (context != null) {
                context.runOnContext(ignored -> emitter.complete(null));
            } else {
                emitter.complete(null);
            }
        }
    }
}
