package dev.ledger.testing;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A Redis server of the test's own, on a free port of 127.0.0.1 or inside a {@link NetworkNamespace} on its
 * address, keeping nothing on disk: tests may flush it, flush its script cache, kill and restart it without
 * touching the shared one.
 */
public final class RedisServer implements AutoCloseable {
    private final String address;
    private final int port;
    private final NetworkNamespace namespace;
    private Process process;

    /** On 127.0.0.1, on a free port. */
    public RedisServer() throws IOException {
        this(null);
    }

    /** Inside {@code namespace}, listening on its address (port 6379, which is the namespace's alone). */
    public RedisServer(NetworkNamespace namespace) throws IOException {
        this.namespace = namespace;
        InetSocketAddress listen = NetworkNamespace.listenAddress(namespace, 6379);
        this.address = listen.getHostString();
        this.port = listen.getPort();
        start();
    }

    /** Whether redis-server is on the PATH. */
    public static boolean installed() {
        String path = System.getenv().getOrDefault("PATH", "");
        return java.util.Arrays.stream(path.split(File.pathSeparator))
                .anyMatch(dir -> new File(dir, "redis-server").canExecute());
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://" + address + ":" + port;
    }

    public void start() throws IOException {
        // clients of a namespace's server come over its link, which protected mode refuses (DENIED) without a password
        List<String> command = List.of("redis-server", "--port", Integer.toString(port), "--bind", address,
                "--protected-mode", namespace == null ? "yes" : "no", "--save", "", "--appendonly", "no", "--daemonize", "no");
        // `ip netns exec` becomes the server (exec), so that this process is the server itself
        process = new ProcessBuilder(namespace == null ? command : namespace.command(command))
                .redirectErrorStream(true)
                .redirectOutput(new File("target/redis-" + address + "-" + port + ".log"))
                .start();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(this::accepts);
    }

    /** Kills the server at once (SIGKILL): everything in it, scripts included, is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(20, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> !accepts());
    }

    public void restart() throws IOException, InterruptedException {
        kill();
        start();
    }

    /** Whether it takes a connection within a second (bounded: a cut link answers nothing). */
    private boolean accepts() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), 1_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            kill();
        }
    }
}
