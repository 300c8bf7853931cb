package dev.ledger.idempotency;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script read once from {@code src/main/resources/redis/}, run by its SHA-1 (EVALSHA) and
 * sent whole (EVAL, which also caches it) only when Redis answers NOSCRIPT: after a restart,
 * a failover or SCRIPT FLUSH. Redis error replies are turned into {@link RedisScriptException}
 * (they are Throwables but not Exceptions, which fault-tolerance policies would not see).
 */
final class LuaScript {
    private final String source;
    private final String sha;

    private LuaScript(String source) {
        this.source = source;
        this.sha = sha1(source);
    }

    static LuaScript load(String name) {
        String path = "redis/" + name;
        try (InputStream in = Thread.currentThread().getContextClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("Missing Redis script " + path);
            }
            return new LuaScript(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The SHA-1 that EVALSHA names the script by. */
    String sha() {
        return sha;
    }

    /** Runs the script on {@code key} at {@code node}; NOSCRIPT is that node's own answer, so the EVAL goes there too. */
    Uni<Response> run(RedisPipeline redis, RedisNode node, String key, String... args) {
        return redis.send(node, key, request(Command.EVALSHA, sha, key, args))
                .onFailure(LuaScript::isNoScript)
                .recoverWithUni(() -> redis.send(node, key, request(Command.EVAL, source, key, args)))
                .onFailure(f -> !(f instanceof Exception))
                .transform(RedisScriptException::new);
    }

    private static Request request(Command command, String script, String key, String[] args) {
        Request request = Request.cmd(command).arg(script).arg(1).arg(key);
        for (String arg : args) {
            request.arg(arg);
        }
        return request;
    }

    private static boolean isNoScript(Throwable failure) {
        return failure.getMessage() != null && failure.getMessage().startsWith("NOSCRIPT");
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JVM", e);
        }
    }

    /** A Redis error reply, as an Exception. */
    static final class RedisScriptException extends RuntimeException {
        RedisScriptException(Throwable reply) {
            super("Redis replied " + reply.getMessage());
        }
    }
}
