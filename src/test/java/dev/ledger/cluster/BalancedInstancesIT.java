package dev.ledger.cluster;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The clustered set-up as the project's scripts start it: three packaged instances behind HAProxy
 * ({@code .ci/balanced}), sharing one PostgreSQL database and the Redis Cluster ({@code .ci/redis-cluster}).
 * Duplicates of one key spread over every instance apply once; an instance killed with SIGKILL mid-storm
 * applies no key twice for clients that retry through the balancer; a rolling restart (SIGTERM to each
 * instance in turn: readiness DOWN first, in-flight requests finished) fails no request of a client that
 * retries 503s.
 */
@EnabledIf(value = "dev.ledger.testing.PackagedApp#configured", disabledReason = "needs the local servers (tests.it.* properties)")
class BalancedInstancesIT {
    private static final int PORT = Integer.getInteger("tests.balanced.port", 18500);
    private static final int INSTANCES = 3;
    private static final Path DIR = Path.of("/tmp/ledger-balanced-" + PORT);
    private static final String DATABASE = PackagedApp.DATABASE + "_balanced";
    private static final String API_KEY = "balanced-key-0123456789abcdef";
    private static final ApiClient CLIENT = new ApiClient("balanced", API_KEY);
    private static final URI BALANCER = URI.create("http://127.0.0.1:" + PORT + "/");
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void freshDatabaseAndTheCluster() throws Exception {
        PackagedApp.recreateDatabase(DATABASE);
        RedisCluster.start();
        RedisCluster.flushAll();
    }

    @AfterAll
    static void stopTheInstances() {
        balanced("stop");
    }

    @BeforeEach
    void everyInstanceUp() {
        balanced("start");
    }

    /** {@code .ci/balanced action} with the instances' settings. */
    private static void balanced(String action) {
        try {
            ProcessBuilder builder = new ProcessBuilder("bash", ".ci/balanced", action).redirectErrorStream(true);
            Map<String, String> env = builder.environment();
            env.keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("LEDGER_"));
            env.put("BALANCED_PORT", Integer.toString(PORT));
            env.put("BALANCED_INSTANCES", Integer.toString(INSTANCES));
            // .ci/balanced's own options, with the tests' C1 alone and class-data archive (PackagedApp.testJvmOptions)
            env.put("BALANCED_JAVA_OPTS", "-Xms64m -Xmx160m -XX:+UseSerialGC " + PackagedApp.testJvmOptions());
            env.putAll(PackagedApp.onDatabase(DATABASE));
            env.put("QUARKUS_DATASOURCE_USERNAME", PackagedApp.PG_USER);
            // three instances share the machine's PostgreSQL (max_connections 100) with everything else
            env.put("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", "10");
            env.put("QUARKUS_REDIS_CLIENT_TYPE", "cluster");
            env.put("QUARKUS_REDIS_HOSTS", RedisCluster.hosts());
            env.put("LEDGER_API_KEYS", "balanced:" + PackagedApp.sha256Hex(API_KEY));
            // a key whose request died with its instance is free again soon
            env.put("LEDGER_IDEMPOTENCY_LEASE", "3s");
            // no rounds of requests before readiness, as for every packaged application the tests start
            // (PackagedApp): the clients here retry a 503, and PackagedApplicationIT is the warm-up's test
            env.put("LEDGER_WARM_UP_ROUNDS", "0");
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(180, TimeUnit.SECONDS), ".ci/balanced " + action + " hung");
            assertEquals(0, process.exitValue(), ".ci/balanced " + action + ":\n" + output);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static ProcessHandle instance(int i) throws IOException {
        long pid = Long.parseLong(Files.readString(DIR.resolve("instance-" + i + ".pid")).trim());
        return ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("instance " + i + " is not running"));
    }

    /**
     * Exited, reaped or not: an instance outlives the script that started it, so init is its parent and reaps it only
     * every 2 s here, and until then {@link ProcessHandle#isAlive()} sees the zombie as alive.
     */
    private static boolean gone(ProcessHandle process) {
        if (!process.isAlive()) {
            return true;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return true; // reaped meanwhile
        }
    }

    private static URI direct(int i) {
        return URI.create("http://127.0.0.1:" + (PORT + i) + "/");
    }

    private static int readiness(int i) {
        try {
            return HTTP.send(HttpRequest.newBuilder(direct(i).resolve("/q/health/ready")).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    @Test
    void duplicatesOfOneKeySpreadOverEveryInstanceApplyOnce() throws Exception {
        List<URI> instances = new ArrayList<>();
        for (int i = 1; i <= INSTANCES; i++) {
            instances.add(direct(i));
        }
        // each of 30 copies of every key to instance (copy mod 3), all at once
        PaymentLoad storm = new PaymentLoad("balanced-duplicates", CLIENT, instances).copies(30);
        storm.openAccounts(4);
        storm.wave();
        storm.wave();
        assertEquals(0, storm.reconcile(), "double applications");
    }

    @Test
    void anInstanceKilledMidStormAppliesNoKeyTwiceForClientsRetryingThroughTheBalancer() throws Exception {
        PaymentLoad storm = new PaymentLoad("balanced-sigkill", CLIENT, List.of(BALANCER)).copies(2).cutConnectionsExpected();
        storm.openAccounts(24);
        storm.wave();
        ProcessHandle victim = instance(2);
        CompletableFuture<Void> chaos = CompletableFuture.runAsync(() -> {
            victim.destroyForcibly();
            await().atMost(Duration.ofSeconds(20)).until(() -> gone(victim));
        });
        storm.wavesUntil(chaos, 3);
        assertEquals(0, storm.reconcile(), "double applications");
    }

    @Test
    void aRollingRestartFailsNoRequestOfAClientThatRetries503s() throws Exception {
        PaymentLoad storm = new PaymentLoad("balanced-rolling-restart", CLIENT, List.of(BALANCER)).copies(2);
        storm.openAccounts(24);
        storm.wave();
        List<Integer> readinessDownBeforeExit = new ArrayList<>();
        List<String> timings = new ArrayList<>();
        CompletableFuture<Void> rolling = CompletableFuture.runAsync(() -> {
            for (int i = 1; i <= INSTANCES; i++) {
                try {
                    ProcessHandle instance = instance(i);
                    long sigterm = System.nanoTime();
                    instance.destroy(); // SIGTERM
                    int which = i;
                    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                            .until(() -> readiness(which) == 503 || gone(instance));
                    if (!gone(instance)) {
                        readinessDownBeforeExit.add(i);
                    }
                    await().atMost(Duration.ofSeconds(30)).until(() -> gone(instance));
                    long exited = System.nanoTime();
                    balanced("start");
                    timings.add(String.format("instance %d gone %d ms after SIGTERM, back in HAProxy %d ms later", i,
                            (exited - sigterm) / 1_000_000, (System.nanoTime() - exited) / 1_000_000));
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        });
        int waves = storm.wavesUntil(rolling, 2);
        System.out.printf("[balanced-rolling-restart] %d waves over the restart of %d instances; readiness DOWN before exit: %s; %s%n",
                waves, INSTANCES, readinessDownBeforeExit, timings);
        assertEquals(List.of(1, 2, 3), readinessDownBeforeExit, "each instance reported not ready while still running");
        assertEquals(0, storm.reconcile(), "double applications");
        assertTrue(storm.statuses().keySet().stream().allMatch(status -> status == 201 || status == 409 || status == 503),
                "answers: " + storm.statuses());
    }
}
