package dev.ledger.testing;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * A RabbitMQ node of the test's own, never the shared broker on 5672, so that a test can stop and
 * restart it: its own AMQP port, node name, distribution port (AMQP port + 20000) and data folder,
 * {@code rabbitmq-server} as a child process. Durable queues and persistent messages survive
 * {@link #stop()} and {@link #start()}, as on a real broker restart.
 *
 * <p>The machine's {@code /etc/rabbitmq/rabbitmq-env.conf} and {@code rabbitmq.conf} pin the shared
 * node's name and port, so both are replaced. Debian's {@code rabbitmq-server} script drops to the
 * {@code rabbitmq} user when started as root, so the folder is handed to that user.
 */
public final class RabbitMqNode implements AutoCloseable {
    /** The AMQP port of the tests' first node ({@code tests.rabbitmq-node-port}); a second one takes the next. */
    public static final int FIRST_PORT = Integer.getInteger("tests.rabbitmq-node-port", 5681);

    private final String node;
    private final int port;
    private final Path dir;
    private Process process;

    public RabbitMqNode(String name, int port) throws IOException, InterruptedException {
        this.node = name + "@localhost";
        this.port = port;
        this.dir = Files.createTempDirectory("ledger-rabbitmq-" + name + "-");
        Files.createDirectories(dir.resolve("mnesia"));
        Files.createDirectories(dir.resolve("log"));
        Files.writeString(dir.resolve("enabled_plugins"), "[].\n");
        Files.writeString(dir.resolve("rabbitmq.conf"),
                "listeners.tcp.local = 127.0.0.1:" + port + "\nloopback_users = none\n");
        if (isRoot()) {
            run("chown", "-R", "rabbitmq:rabbitmq", dir.toString());
        }
        start();
    }

    /** Whether {@code rabbitmq-server} and {@code rabbitmqctl} are installed ({@code bash .ci/services}). */
    public static boolean installed() {
        return executable("rabbitmq-server") != null && executable("rabbitmqctl") != null
                && executable("rabbitmq-diagnostics") != null;
    }

    public int port() {
        return port;
    }

    /** Starts the node and waits until it accepts AMQP connections. */
    public void start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(node + " is running");
        }
        quietly("rabbitmqctl", "-q", "-n", node, "stop"); // a node left over by an earlier run that died
        ProcessBuilder builder = new ProcessBuilder(executable("rabbitmq-server"))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout").toFile()));
        Map<String, String> env = builder.environment();
        env.put("RABBITMQ_CONF_ENV_FILE", "/dev/null");
        env.put("RABBITMQ_NODENAME", node);
        env.put("RABBITMQ_CONFIG_FILE", dir.resolve("rabbitmq.conf").toString());
        env.put("RABBITMQ_DIST_PORT", Integer.toString(port + 20000));
        env.put("RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString());
        env.put("RABBITMQ_LOG_BASE", dir.resolve("log").toString());
        env.put("RABBITMQ_ENABLED_PLUGINS_FILE", dir.resolve("enabled_plugins").toString());
        env.put("RABBITMQ_PID_FILE", dir.resolve("pid").toString());
        env.put("ERL_EPMD_ADDRESS", "127.0.0.1");
        env.put("RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}");
        process = builder.start();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(300))
                .until(() -> !process.isAlive()
                        || quietly("rabbitmq-diagnostics", "-q", "-n", node, "check_port_connectivity") == 0);
        if (!process.isAlive()) {
            throw new IllegalStateException("RabbitMQ node " + node + " exited at start:\n" + output());
        }
    }

    /** Stops the node as an operator does ({@code rabbitmqctl stop}) and waits until it has exited. */
    public void stop() throws IOException, InterruptedException {
        if (process == null || !process.isAlive()) {
            return;
        }
        quietly("rabbitmqctl", "-q", "-n", node, "stop");
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    public String output() throws IOException {
        Path out = dir.resolve("stdout");
        return Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8) : "";
    }

    @Override
    public void close() throws Exception {
        try {
            stop();
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    private static int quietly(String... command) {
        command[0] = executable(command[0]);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", command) + " failed");
        }
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** The command's path: on PATH, or in /usr/sbin where Debian puts RabbitMQ's; null when missing. */
    private static String executable(String command) {
        for (String dir : (System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/sbin").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
                return Path.of(dir, command).toString();
            }
        }
        return null;
    }
}
