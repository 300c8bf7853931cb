package dev.ledger;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * The packaged application ({@code target/quarkus-app/quarkus-run.jar}) as a separate process,
 * configured only through environment variables, as an operator runs it.
 */
public final class PackagedApp implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Map<String, String> env;
    private final File log;
    private final int port;
    private Process process;

    /** @param env the QUARKUS_* and LEDGER_* variables; QUARKUS_HTTP_PORT is chosen here */
    public PackagedApp(Map<String, String> env, File log) throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            this.port = socket.getLocalPort();
        }
        this.env = new LinkedHashMap<>(env);
        this.env.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        this.log = log;
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    public Process process() {
        return process;
    }

    /** Starts the process (its output appended to the log) and waits until it is ready. */
    public PackagedApp start() throws IOException {
        ProcessBuilder builder = new ProcessBuilder(
                System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
                "-jar", "target/quarkus-app/quarkus-run.jar")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log));
        builder.environment().keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("LEDGER_"));
        builder.environment().putAll(env);
        process = builder.start();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> !process.isAlive() || status("/q/health/ready") == 200);
        if (!process.isAlive()) {
            throw new IllegalStateException("The application exited with " + process.exitValue() + "; see " + log);
        }
        return this;
    }

    /** SIGKILL: no shutdown hook, no draining, as when a machine dies. */
    public void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    public int status(String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(baseUrl() + path)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }
}
