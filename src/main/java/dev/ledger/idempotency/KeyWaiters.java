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
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.RedisConnection;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Lets a request wait for an in-flight original with the same key to settle (complete, or give the
 * key back) without holding a thread, a database connection, or asking Redis in a loop.
 *
 * <ul>
 *   <li>One Redis subscription per instance: {@code complete.lua} and {@code release.lua} PUBLISH
 *       the key on {@link IdempotencyStore#SETTLED_CHANNEL}, and every waiter of that key, on
 *       whichever instance, is woken.</li>
 *   <li>A bounded fallback for a wake-up that is missed (the subscription was down, the original's
 *       instance died and its lease expired, which publishes nothing): every
 *       {@code ledger.idempotency.wait-recheck}, while anything waits, one {@code state.lua} call per
 *       waited-on key (not per waiter) looks whether it is still in flight.</li>
 *   <li>A waiter also wakes at the end of its own bound.</li>
 * </ul>
 * Waking only says "look again": the waiter reserves the key again and acts on what it finds.
 */
@ApplicationScoped
public class KeyWaiters {
    private static final Logger LOG = Logger.getLogger(KeyWaiters.class);

    private final RedisNodes nodes;
    private final IdempotencyStore store;
    private final Vertx vertx;
    private final long recheckMillis;
    private final Map<String, Set<Waiter>> waiting = new ConcurrentHashMap<>();
    private final AtomicBoolean subscribing = new AtomicBoolean();
    private final Counter wokenByMessage;
    private final Counter wokenByRecheck;
    private final Counter wokenAtBound;
    private volatile RedisConnection subscription;
    private volatile long recheckTimer = -1;

    public KeyWaiters(RedisNodes nodes, IdempotencyStore store, Vertx vertx, LedgerConfig config, MeterRegistry metrics) {
        this.nodes = nodes;
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
     * Completes when the key {@code redisKey} may have settled, or after {@code bound}, whichever
     * comes first; on the caller's Vert.x context. Never fails.
     */
    public Uni<Void> settled(String redisKey, Duration bound) {
        subscribe();
        Context caller = Vertx.currentContext();
        Uni<Void> woken = Uni.createFrom().emitter(emitter -> {
            Waiter waiter = new Waiter(emitter, caller);
            waiting.computeIfAbsent(redisKey, key -> ConcurrentHashMap.newKeySet()).add(waiter);
            emitter.onTermination(() -> forget(redisKey, waiter));
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

    private void forget(String redisKey, Waiter waiter) {
        waiting.computeIfPresent(redisKey, (key, waiters) -> {
            waiters.remove(waiter);
            return waiters.isEmpty() ? null : waiters;
        });
    }

    /** Whether this instance's subscription is open now (tests). */
    boolean subscribed() {
        return subscription != null;
    }

    /** Wakes every waiter of {@code redisKey}. */
    void wake(String redisKey, Counter by) {
        Set<Waiter> waiters = waiting.remove(redisKey);
        if (waiters != null) {
            waiters.forEach(waiter -> {
                by.increment();
                waiter.wake();
            });
        }
    }

    /**
     * The one subscription of this instance, (re)opened when a request starts waiting and there is
     * none: on the one Redis server, or on one primary of a Redis Cluster, where a PUBLISH from any
     * node reaches every subscriber. If that node goes, the subscription is lost and opened again on
     * a primary of the current slot map; the recheck covers the gap.
     */
    private void subscribe() {
        if (subscription != null || !subscribing.compareAndSet(false, true)) {
            return;
        }
        nodes.primaries().get(0).client().connect()
                .chain(connection -> {
                    connection.handler(this::onMessage);
                    connection.exceptionHandler(failure -> lost(connection, failure));
                    connection.endHandler(() -> lost(connection, null));
                    return connection.send(Request.cmd(Command.SUBSCRIBE).arg(IdempotencyStore.SETTLED_CHANNEL))
                            .replaceWith(connection);
                })
                .subscribe().with(connection -> {
                    subscription = connection;
                    subscribing.set(false);
                    LOG.debugf("Subscribed to %s", IdempotencyStore.SETTLED_CHANNEL);
                }, failure -> {
                    subscribing.set(false);
                    // waiters still wake through the recheck; the next waiter tries again
                    LOG.debugf("Cannot subscribe to %s: %s", IdempotencyStore.SETTLED_CHANNEL, failure.toString());
                });
    }

    private void lost(RedisConnection connection, Throwable failure) {
        if (subscription == connection) {
            subscription = null;
            LOG.debugf("Subscription to %s lost (%s)", IdempotencyStore.SETTLED_CHANNEL, failure);
            connection.close().subscribe().with(ignored -> {
            }, ignored -> {
            });
        }
    }

    /** A pushed {@code message} (RESP2 or RESP3): {@code [message, channel, key]}. */
    private void onMessage(Response message) {
        if (message != null && message.size() == 3 && "message".equals(message.get(0).toString())
                && IdempotencyStore.SETTLED_CHANNEL.equals(message.get(1).toString())) {
            wake(message.get(2).toString(), wokenByMessage);
        }
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
            subscribe();
            for (String key : waiting.keySet()) {
                store.inFlight(key).subscribe().with(inFlight -> {
                    if (!inFlight) {
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

    @PreDestroy
    void close() {
        RedisConnection connection = subscription;
        subscription = null;
        if (connection != null) {
            connection.closeAndForget();
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
