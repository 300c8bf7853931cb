package dev.ledger.testing;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A Redis server of the test's own, on a free port, keeping nothing on disk: tests may flush it,
 * flush its script cache, kill and restart it without touching the shared one.
 */
public final class RedisServer implements AutoCloseable {
    private final int port;
    private Process process;

    public RedisServer() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            this.port = socket.getLocalPort();
        }
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
        return "redis://127.0.0.1:" + port;
    }

    public void start() throws IOException {
        process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no")
                .redirectErrorStream(true)
                .redirectOutput(new File("target/redis-" + port + ".log"))
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

    private boolean accepts() {
        try (Socket ignored = new Socket(InetAddress.getLoopbackAddress(), port)) {
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
