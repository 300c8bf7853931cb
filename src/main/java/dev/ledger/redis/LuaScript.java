package dev.ledger.redis;

import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Request;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script of {@code src/main/resources/redis/}, as a value: its text and the SHA-1 that EVALSHA
 * names it by. {@link RedisCalls} runs it by its SHA-1 and sends it whole (EVAL, which also caches it)
 * only when Redis answers NOSCRIPT: after a restart, a failover or SCRIPT FLUSH.
 *
 * <p>Read when a store is created, at run time, the same way on the JVM and in a native executable
 * (from the resources {@code quarkus.native.resources.includes} puts in the image): a static field
 * would be read by the native-image builder, which initialises classes at build time.
 */
public record LuaScript(String name, String source, String sha) {

    public static LuaScript load(String name) {
        String path = "redis/" + name;
        try (InputStream in = Thread.currentThread().getContextClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("Missing Redis script " + path);
            }
            String source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return new LuaScript(name, source, sha1(source));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** EVALSHA of this script on {@code key}. */
    Request bySha(String key, String... args) {
        return request(Command.EVALSHA, sha, key, args);
    }

    /** EVAL of this script's text on {@code key}: after NOSCRIPT. */
    Request whole(String key, String... args) {
        return request(Command.EVAL, source, key, args);
    }

    private static Request request(Command command, String script, String key, String[] args) {
        Request request = Request.cmd(command).arg(script).arg(1).arg(key);
        for (String arg : args) {
            request.arg(arg);
        }
        return request;
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every JVM", e);
        }
    }
}
