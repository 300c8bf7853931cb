package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * The Redis Cluster of {@code .ci/redis-cluster} (three primaries, one replica each), on the ports
 * from {@code tests.redis-cluster.port} (six from there; the pom's property, default 7001), driven
 * through {@code redis-cli}: started when missing, a primary killed with SIGKILL or handed over with
 * {@code CLUSTER FAILOVER}, and put back together.
 */
public final class RedisCluster {
    public static final int FIRST_PORT = Integer.getInteger("tests.redis-cluster.port", 7001);
    private static final Path SCRIPT = Path.of(".ci/redis-cluster");
    private static final ObjectMapper JSON = new ObjectMapper();

    private RedisCluster() {
    }

    /** Starts every node that is not running and waits until the cluster is whole (idempotent). */
    public static void start() {
        script("start");
    }

    /** {@code quarkus.redis.hosts} for the application: every node, so that any of them can tell the slot map. */
    public static String hosts() {
        StringJoiner hosts = new StringJoiner(",");
        for (int port = FIRST_PORT; port < FIRST_PORT + 6; port++) {
            hosts.add("redis://127.0.0.1:" + port);
        }
        return hosts.toString();
    }

    /**
     * The ports of the primaries that serve slots now, as the first node that answers sees them
     * ({@code CLUSTER SLOTS}: each slot has one primary there), in the order of their slots.
     */
    public static List<Integer> primaries() {
        return primariesSeenBy(anyLivePort());
    }

    /**
     * The primaries every running node agrees on, or an empty list while the nodes still disagree (the
     * news of a failover spreads by gossip; one node can list a demoted primary a while longer).
     */
    public static List<Integer> agreedPrimaries() {
        List<Integer> agreed = null;
        for (int port = FIRST_PORT; port < FIRST_PORT + 6; port++) {
            List<Integer> seen;
            try {
                seen = primariesSeenBy(port).stream().sorted().toList();
            } catch (AssertionError down) {
                continue; // killed, or not started again yet
            }
            if (agreed != null && !agreed.equals(seen)) {
                return List.of();
            }
            agreed = seen;
        }
        return agreed == null ? List.of() : agreed;
    }

    private static List<Integer> primariesSeenBy(int port) {
        List<Integer> primaries = new ArrayList<>();
        for (JsonNode range : slotRanges(port)) {
            int primary = range.get(2).get(1).asInt();
            if (!primaries.contains(primary)) {
                primaries.add(primary);
            }
        }
        return primaries;
    }

    /** CLUSTER SLOTS as the node on {@code port} sees it: {@code [[start, end, [host, port, id, {}] of the primary, replicas...], ...]}. */
    private static JsonNode slotRanges(int port) {
        try {
            return JSON.readTree(cli(port, "--json", "CLUSTER", "SLOTS"));
        } catch (IOException e) {
            throw new AssertionError("CLUSTER SLOTS of " + port, e);
        }
    }

    /** The port of the primary that serves {@code key}. */
    public static int primaryOf(String key) {
        int port = anyLivePort();
        int slot = Integer.parseInt(cli(port, "CLUSTER", "KEYSLOT", key).trim());
        for (JsonNode range : slotRanges(port)) {
            if (slot >= range.get(0).asInt() && slot <= range.get(1).asInt()) {
                return range.get(2).get(1).asInt();
            }
        }
        throw new AssertionError("no primary serves slot " + slot);
    }

    /** The port of a replica of the primary on {@code primaryPort}. */
    public static int replicaOf(int primaryPort) {
        String id = null;
        List<String> nodes = nodes();
        for (String line : nodes) {
            String[] fields = line.split(" ");
            if (port(fields[1]) == primaryPort) {
                id = fields[0];
            }
        }
        for (String line : nodes) {
            String[] fields = line.split(" ");
            if (fields[2].contains("slave") && !fields[2].contains("fail") && fields[3].equals(id)) {
                return port(fields[1]);
            }
        }
        throw new AssertionError("no replica of " + primaryPort);
    }

    /** SIGKILL of the node on {@code port}: no shutdown, its data gone with it. */
    public static void kill(int port) throws IOException, InterruptedException {
        Path pidFile = directory().resolve("redis-" + port + ".pid");
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        await().atMost(Duration.ofSeconds(20)).until(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true));
    }

    /** Waits until a replica of the primary that was on {@code port} has taken over its slots. */
    public static void awaitTakeOverFrom(int port) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    List<Integer> primaries = agreedPrimaries();
                    return primaries.size() == 3 && !primaries.contains(port)
                            && cli(anyLivePort(), "CLUSTER", "INFO").contains("cluster_state:ok");
                });
    }

    /** A manual failover: the replica on {@code replicaPort} takes over from its primary, with no data lost. */
    public static void failover(int replicaPort) {
        String answer = cli(replicaPort, "CLUSTER", "FAILOVER").trim();
        if (!answer.equals("OK")) {
            throw new AssertionError("CLUSTER FAILOVER answered " + answer);
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> agreedPrimaries().contains(replicaPort));
    }

    /** FLUSHALL on every primary (the cluster is the tests' own). */
    public static void flushAll() {
        for (int port : primaries()) {
            cli(port, "FLUSHALL");
        }
    }

    /** {@code redis-cli -p port args...}, its output. */
    public static String cli(int port, String... args) {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
        command.addAll(List.of(args));
        return run(command, Duration.ofSeconds(30));
    }

    private static List<String> nodes() {
        return cli(anyLivePort(), "CLUSTER", "NODES").lines().filter(line -> !line.isBlank()).toList();
    }

    private static int anyLivePort() {
        for (int port = FIRST_PORT; port < FIRST_PORT + 6; port++) {
            try {
                if (cli(port, "PING").trim().equals("PONG")) {
                    return port;
                }
            } catch (AssertionError down) {
                // killed, or not started again yet: ask another node
            }
        }
        throw new AssertionError("no node of the cluster answers");
    }

    private static int port(String address) {
        // 127.0.0.1:7001@17001
        return Integer.parseInt(address.substring(address.indexOf(':') + 1, address.indexOf('@')));
    }

    private static Path directory() {
        return Path.of("/tmp/ledger-redis-cluster-" + FIRST_PORT);
    }

    private static void script(String action) {
        List<String> command = List.of("bash", SCRIPT.toString(), action);
        run(command, Duration.ofSeconds(120));
    }

    private static String run(List<String> command, Duration limit) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().put("REDIS_CLUSTER_PORT", Integer.toString(FIRST_PORT));
            Process process = builder.start();
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(limit.toSeconds(), TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new AssertionError(command + " failed:\n" + new String(output, StandardCharsets.UTF_8));
            }
            return new String(output, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
