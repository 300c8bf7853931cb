package dev.ledger.redis;

import dev.ledger.idempotency.SettledKeys;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.RedisConnection;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Settled keys in Redis: {@code complete.lua} and {@code release.lua} PUBLISH the key on
 * {@link RedisIdempotencyStore#SETTLED_CHANNEL}, and one subscription per instance hears them. It is
 * opened when asked for and there is none: on the one Redis server, or on one primary of a Redis Cluster,
 * where a PUBLISH from any node reaches every subscriber (Quarkus' cluster client would subscribe on a
 * random node, and fail while any node is down). If that node goes, the subscription is lost and opened
 * again at the next request, on a primary of the current slot map.
 */
@ApplicationScoped
@Typed(RedisSettledKeys.class) // chosen with the store (dev.ledger.fastpath)
public class RedisSettledKeys implements SettledKeys {
    private static final Logger LOG = Logger.getLogger(RedisSettledKeys.class);

    private final RedisNodes nodes;
    private final AtomicBoolean subscribing = new AtomicBoolean();
    private volatile RedisConnection subscription;
    private volatile Consumer<String> listener = ignored -> {
    };

    public RedisSettledKeys(RedisNodes nodes) {
        this.nodes = nodes;
    }

    @Override
    public void listen(Consumer<String> listener) {
        this.listener = listener;
        if (subscription != null || !subscribing.compareAndSet(false, true)) {
            return;
        }
        nodes.primaries().get(0).client().connect()
                .chain(connection -> {
                    connection.handler(this::onMessage);
                    connection.exceptionHandler(failure -> lost(connection, failure));
                    connection.endHandler(() -> lost(connection, null));
                    return connection.send(Request.cmd(Command.SUBSCRIBE).arg(RedisIdempotencyStore.SETTLED_CHANNEL))
                            .replaceWith(connection);
                })
                .subscribe().with(connection -> {
                    subscription = connection;
                    subscribing.set(false);
                    LOG.debugf("Subscribed to %s", RedisIdempotencyStore.SETTLED_CHANNEL);
                }, failure -> {
                    subscribing.set(false);
                    // waiters still wake through their recheck; the next one tries again
                    LOG.debugf("Cannot subscribe to %s: %s", RedisIdempotencyStore.SETTLED_CHANNEL, failure.toString());
                });
    }

    /** Whether this instance's subscription is open now. */
    public boolean subscribed() {
        return subscription != null;
    }

    private void lost(RedisConnection connection, Throwable failure) {
        if (subscription == connection) {
            subscription = null;
            LOG.debugf("Subscription to %s lost (%s)", RedisIdempotencyStore.SETTLED_CHANNEL, failure);
            connection.close().subscribe().with(ignored -> {
            }, ignored -> {
            });
        }
    }

    /** A pushed {@code message} (RESP2 or RESP3): {@code [message, channel, key]}. */
    private void onMessage(Response message) {
        if (message != null && message.size() == 3 && "message".equals(message.get(0).toString())
                && RedisIdempotencyStore.SETTLED_CHANNEL.equals(message.get(1).toString())) {
            String keyId = RedisIdempotencyStore.keyId(message.get(2).toString());
            if (keyId != null) {
                listener.accept(keyId);
            }
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
}
