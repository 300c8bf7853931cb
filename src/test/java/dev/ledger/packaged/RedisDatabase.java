package dev.ledger.packaged;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The Redis database the packaged application under test uses ({@code quarkus.redis.hosts}, a system
 * property of this JVM: set by the pom's {@code local-services} profile, or by Dev Services), spoken
 * to directly in RESP: the test runs outside the application, with no Quarkus client to inject.
 * It only ever empties that one database ({@code FLUSHDB}), never the server ({@code FLUSHALL}).
 */
final class RedisDatabase {
    private final String host;
    private final int port;
    private final int database;
    private final String user;
    private final String password;

    private RedisDatabase(URI uri) {
        this.host = uri.getHost();
        this.port = uri.getPort() < 0 ? 6379 : uri.getPort();
        String path = uri.getPath() == null ? "" : uri.getPath().replace("/", "");
        this.database = path.isEmpty() ? 0 : Integer.parseInt(path);
        String userInfo = uri.getRawUserInfo();
        if (userInfo == null) {
            this.user = null;
            this.password = null;
        } else {
            int colon = userInfo.indexOf(':');
            this.user = colon < 0 ? null : decode(userInfo.substring(0, colon));
            this.password = decode(colon < 0 ? userInfo : userInfo.substring(colon + 1));
        }
    }

    /** The application's Redis, as this JVM was told. */
    static RedisDatabase ofApplication() {
        String hosts = System.getProperty("quarkus.redis.hosts");
        if (hosts == null) {
            throw new IllegalStateException("quarkus.redis.hosts is not set: neither the local-services profile nor Dev Services configured Redis");
        }
        RedisDatabase redis = new RedisDatabase(URI.create(hosts.split(",")[0].trim()));
        // Database 0 of the default port is the shared server's (dev mode, other tools): never flush it.
        if (redis.port == 6379 && redis.database == 0) {
            throw new IllegalStateException("refusing to flush database 0 of " + hosts + ": give the tests their own (tests.redis-db)");
        }
        return redis;
    }

    int database() {
        return database;
    }

    /** Forgets every idempotency key, as a Redis restart, failover or flush does. */
    void flush() throws IOException {
        Object reply = command("FLUSHDB");
        if (!"OK".equals(reply)) {
            throw new IllegalStateException("FLUSHDB answered " + reply);
        }
    }

    /** How many keys the database holds. */
    long size() throws IOException {
        return (Long) command("DBSIZE");
    }

    private Object command(String... command) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 5_000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            if (password != null) {
                expectOk(send(out, in, user == null ? new String[]{"AUTH", password} : new String[]{"AUTH", user, password}));
            }
            expectOk(send(out, in, "SELECT", Integer.toString(database)));
            return send(out, in, command);
        }
    }

    private static Object send(OutputStream out, InputStream in, String... command) throws IOException {
        StringBuilder request = new StringBuilder("*").append(command.length).append("\r\n");
        for (String part : command) {
            request.append('$').append(part.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(part).append("\r\n");
        }
        out.write(request.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
        return read(in);
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new IOException("Redis error: " + line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                List<Object> items = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("unexpected Redis reply type " + type);
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\r'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed by Redis");
            }
            line.append((char) c);
        }
        in.read(); // '\n'
        return line.toString();
    }

    private static void expectOk(Object reply) {
        if (!"OK".equals(reply)) {
            throw new IllegalStateException("Redis answered " + reply);
        }
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return host + ":" + port + "/" + database;
    }
}
