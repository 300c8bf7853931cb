package dev.ledger.floor;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Redis floor (with {@code floor.door=redis}): the least a replay needs on this machine. One plain Vert.x
 * route, as {@link VertxFloor}, that for a request with an {@code Idempotency-Key} sends the service's own reserve
 * script ({@code reserve.lua}, by {@code EVALSHA}) on the key's hash through the Vert.x Redis client, as the service
 * does, and answers the recorded bytes the script returns. A key it finds free it records once (the first round
 * of the warm-up), so that every measured request is a replay. No authentication, validation, fingerprint, metrics,
 * breaker or deadline: what is left is HTTP, the client, the script, and the Redis server's own work. Each event loop
 * sends on one connection of its own, the client pipelining the commands of its requests (no pool to take a
 * connection from and give it back per command; the service gathers the commands of a turn into one write).
 */
@ApplicationScoped
public class RedisFloor {
    /** The fingerprint every request of the floor claims: the floor compares nothing. */
    private static final String FINGERPRINT = "floor";
    private static final String OWNER = "floor";
    private static final String LEASE_MILLIS = "30000";
    private static final long RETENTION_MILLIS = 86_400_000L;

    private Redis redis;
    private String sha;
    /** The event loop's own connection (each request's callbacks run on the loop that took it). */
    private final ThreadLocal<Future<RedisConnection>> connections = new ThreadLocal<>();

    void route(@Observes Router router, @ConfigProperty(name = "floor.door") String door, Instance<Redis> client) {
        if (!"redis".equals(door)) {
            return;
        }
        redis = client.get();
        byte[] script = script();
        sha = HexFormat.of().formatHex(digest("SHA-1").digest(script));
        redis.send(Request.cmd(Command.SCRIPT).arg("LOAD").arg(Buffer.buffer(script)))
                .toCompletionStage().toCompletableFuture().join();
        router.route().order(Integer.MIN_VALUE).handler(this::answer);
    }

    /** reserve.lua's fourth argument, the request's path (the key's lookup shows it while the key is in flight). */
    private static final String PATH = "/accounts/floor/transactions";

    private void answer(RoutingContext context) {
        HttpServerRequest request = context.request();
        if (request.isEnded()) {
            replay(context);
        } else {
            request.end().onComplete(ended -> replay(context));
            request.resume();
        }
    }

    private void replay(RoutingContext context) {
        String key = context.request().getHeader("Idempotency-Key");
        HttpServerResponse response = context.response();
        if (key == null) { // a read: no Redis, as the service's GETs
            response.putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(Buffer.buffer(Answer.BODY));
            return;
        }
        MessageDigest sha256 = digest("SHA-256");
        sha256.update("bench".getBytes(StandardCharsets.UTF_8));
        sha256.update((byte) 0);
        sha256.update(key.getBytes(StandardCharsets.US_ASCII));
        String id = "idem:{" + HexFormat.of().formatHex(sha256.digest()) + "}";
        connection().compose(redis -> redis.send(Request.cmd(Command.EVALSHA).arg(sha).arg(1).arg(id).arg(FINGERPRINT)
                                .arg(OWNER).arg(LEASE_MILLIS).arg(PATH).arg(System.currentTimeMillis()))
                        .compose(reply -> "COMPLETED".equals(reply.get(0).toString()) ? Future.succeededFuture(reply) : record(redis, id)))
                .onSuccess(reply -> send(response, reply))
                .onFailure(failure -> response.setStatusCode(503).end(String.valueOf(failure.getMessage())));
    }

    private Future<RedisConnection> connection() {
        Future<RedisConnection> connection = connections.get();
        if (connection == null || connection.failed()) {
            connection = redis.connect();
            connections.set(connection);
        }
        return connection;
    }

    /** A free key recorded as the service records an answer, then answered as a replay. */
    private Future<Response> record(RedisConnection redis, String id) {
        return redis.send(Request.cmd(Command.HSET).arg(id).arg("state").arg("COMPLETED").arg("status").arg("201")
                        .arg("ctype").arg("application/json").arg("location").arg("").arg("body").arg(Buffer.buffer(Answer.BODY)))
                .compose(ignored -> redis.send(Request.cmd(Command.PEXPIRE).arg(id).arg(RETENTION_MILLIS)))
                .compose(ignored -> redis.send(Request.cmd(Command.EVALSHA).arg(sha).arg(1).arg(id).arg(FINGERPRINT)
                        .arg(OWNER).arg(LEASE_MILLIS).arg(PATH).arg(System.currentTimeMillis())));
    }

    /** The reply {COMPLETED, status, content type, location, body} as the service sends a replay. */
    private static void send(HttpServerResponse response, Response reply) {
        response.setStatusCode(reply.get(1).toInteger()).putHeader(HttpHeaders.CONTENT_TYPE, reply.get(2).toString())
                .putHeader(Answer.REPLAYED, "true");
        String location = reply.get(3).toString();
        if (!location.isEmpty()) {
            response.putHeader(HttpHeaders.LOCATION, location);
        }
        response.end(reply.get(4).toBuffer());
    }

    private static byte[] script() {
        try (InputStream in = RedisFloor.class.getResourceAsStream("/reserve.lua")) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static MessageDigest digest(String algorithm) {
        try {
            return MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
