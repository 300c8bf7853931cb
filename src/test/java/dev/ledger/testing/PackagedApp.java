package dev.ledger.testing;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * {@code java -jar target/quarkus-app/quarkus-run.jar} as a separate process, as an operator runs
 * it: configured only by environment variables, its output (stdout and stderr) in a log file. The
 * servers come from the system properties {@code tests.it.*}, which the pom's
 * {@code local-services} profile sets; {@link #configured()} is false where Dev Services run instead.
 */
public final class PackagedApp implements AutoCloseable {
    /** The packaged applications' JVM options in the tests ({@code JAVA_TOOL_OPTIONS}): C1 alone (docs/testing.md). */
    private static final String C1_ALONE = "-XX:TieredStopAtLevel=1";
    /** The JDK's dynamic class-data archive of the jar's start, made once per test JVM ({@link #testJvmOptions()}). */
    private static final Path ARCHIVE = Path.of("target", "packaged-app.jsa").toAbsolutePath();
    private static boolean archiveTried;
    public static final String PG_HOST = System.getProperty("tests.it.pg-host");
    public static final String PG_USER = System.getProperty("tests.it.pg-user", "postgres");
    public static final String REDIS = System.getProperty("tests.it.redis", "redis://127.0.0.1:6379/2");
    public static final String DATABASE = System.getProperty("tests.it.pg-db", "ledger_packaged_it");

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private Process process;
    private final String base;
    private final Path log;
    private final ProcessBuilder builder;

    private PackagedApp(ProcessBuilder builder, String base, Path log) throws IOException {
        this.builder = builder;
        this.process = builder.start();
        this.base = base;
        this.log = log;
    }

    /** The lower-case hex SHA-256 of an API key, as {@code printf %s "$KEY" | sha256sum} prints it. */
    public static String sha256Hex(String apiKey) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(apiKey.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The JVM options of every packaged application the tests start: C1 alone, and the classes of the jar's start
     * mapped from a dynamic class-data archive (AppCDS), which the first call makes with one start of the jar
     * (about 8 s) and every later start saves about a quarter of its CPU with (docs/testing.md). Where the archive
     * could not be made, C1 alone.
     */
    public static synchronized String testJvmOptions() {
        if (!archiveTried) {
            archiveTried = true;
            try {
                trainArchive();
            } catch (Exception e) {
                System.out.println("[packaged-app] no class-data archive, starting without one: " + e);
            }
        }
        return Files.exists(ARCHIVE) ? C1_ALONE + " -XX:SharedArchiveFile=" + ARCHIVE : C1_ALONE;
    }

    /**
     * Starts the jar on a database of its own with {@code -XX:ArchiveClassesAtExit}, sends it a payment, and stops
     * it with SIGTERM: the JVM writes the classes it loaded into {@link #ARCHIVE} as it exits. Made anew for every
     * test JVM, so that it always matches the jar this build packaged (a stale one would be refused by the JVM).
     */
    private static void trainArchive() throws Exception {
        Files.deleteIfExists(ARCHIVE);
        String database = DATABASE + "_cds";
        recreateDatabase(database);
        String apiKey = "class-data-archive-key-0123456789";
        Map<String, String> environment = new HashMap<>();
        environment.put("JAVA_TOOL_OPTIONS", C1_ALONE + " -XX:ArchiveClassesAtExit=" + ARCHIVE);
        environment.putAll(onDatabase(database));
        environment.put("LEDGER_API_KEYS", "cds:" + sha256Hex(apiKey));
        long started = System.nanoTime();
        PackagedApp app = start(environment, "packaged-app-cds.log");
        try {
            HttpResponse<String> opened = app.post("/accounts", apiKey, "cds-" + System.nanoTime(), "{\"currency\":\"EUR\"}");
            if (opened.statusCode() != 201) {
                throw new IllegalStateException("the training start answered " + opened.statusCode() + ": " + opened.body());
            }
        } finally {
            app.close();
        }
        System.out.printf("[packaged-app] class-data archive %s: %s in %d ms%n", ARCHIVE,
                Files.exists(ARCHIVE) ? Files.size(ARCHIVE) / (1024 * 1024) + " MB" : "not written",
                (System.nanoTime() - started) / 1_000_000);
    }

    public static boolean configured() {
        return PG_HOST != null;
    }

    /** Drops and creates the IT database, so that the application migrates an empty one. */
    public static void recreateDatabase() throws Exception {
        recreateDatabase(DATABASE);
    }

    /** Drops and creates database {@code database} of the IT server: a class that runs beside others has one of its own. */
    public static void recreateDatabase(String database) throws Exception {
        try (Connection admin = DriverManager.getConnection("jdbc:postgresql://" + PG_HOST + "/postgres", PG_USER, "");
             Statement sql = admin.createStatement()) {
            sql.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
            sql.execute("CREATE DATABASE " + database);
        }
    }

    /** The jar's settings (reactive and JDBC URLs) for database {@code name} of the IT server. */
    public static Map<String, String> onDatabase(String name) {
        return onDatabase(name, PG_HOST);
    }

    /**
     * As {@link #onDatabase(String)}, with the requests through {@code host} (a proxy in front of the server) and
     * Flyway's migration at start directly.
     */
    public static Map<String, String> onDatabase(String name, String host) {
        return Map.of("QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + host + "/" + name,
                "QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://" + PG_HOST + "/" + name);
    }

    public static Connection database() throws Exception {
        return database(DATABASE);
    }

    /** A database of the IT server by name. */
    public static Connection database(String name) throws Exception {
        return DriverManager.getConnection("jdbc:postgresql://" + PG_HOST + "/" + name, PG_USER, "");
    }

    /**
     * Starts the jar with the connection settings, no warm-up rounds and no shutdown delay, plus
     * {@code environment} (a null value removes a variable, and so gives the application's own default). Nothing else of this JVM's environment named QUARKUS_* or LEDGER_* is passed on.
     */
    public static PackagedApp launch(Map<String, String> environment, String logName) throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Path log = Path.of("target", logName);
        ProcessBuilder builder = new ProcessBuilder(javaExecutable(), "-jar", "target/quarkus-app/quarkus-run.jar")
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("LEDGER_"));
        Map<String, String> settings = new HashMap<>();
        settings.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        settings.putAll(onDatabase(DATABASE));
        settings.put("QUARKUS_DATASOURCE_USERNAME", PG_USER);
        settings.put("QUARKUS_REDIS_HOSTS", REDIS);
        // no rounds of requests before readiness (about 3.5 s of every start here): only the tests of
        // the warm-up itself keep the application's own (they pass null)
        settings.put("LEDGER_WARM_UP_ROUNDS", "0");
        // no wait for a balancer to notice readiness DOWN on SIGTERM (5 s in prod): none is in front of it
        settings.put("QUARKUS_SHUTDOWN_DELAY", "0s");
        // the JIT's first tier only and the start's classes from an archive: a start costs about 3.7 s of CPU instead
        // of 9 here, and the suite starts the jar some fifty times on two cores; what the application does is the
        // same. PackagedApplicationIT passes null: the JVM as an operator runs it.
        settings.put("JAVA_TOOL_OPTIONS", environment.containsKey("JAVA_TOOL_OPTIONS") ? null : testJvmOptions());
        settings.putAll(environment);
        change(env, settings);
        return new PackagedApp(builder, "http://127.0.0.1:" + port, log);
    }

    /** Launches the jar and waits until {@code readyPath} answers 200; fails if the process exits first. */
    public static PackagedApp start(Map<String, String> environment, String logName, String readyPath) throws IOException {
        PackagedApp app = launch(environment, logName);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> !app.process.isAlive() || app.status(readyPath) == 200);
        if (!app.process.isAlive()) {
            throw new AssertionError("the application exited with " + app.process.exitValue() + ":\n" + app.output());
        }
        return app;
    }

    public static PackagedApp start(Map<String, String> environment, String logName) throws IOException {
        return start(environment, logName, "/q/health/ready");
    }

    /**
     * Runs the given starts at once and answers their applications in the same order: a start is mostly one core's
     * work, and the machine has two. Fails with the first start's failure, once the applications that did start
     * are stopped (none is left running for no test).
     */
    public static List<PackagedApp> startTogether(List<Callable<PackagedApp>> starts) throws Exception {
        List<CompletableFuture<PackagedApp>> started = starts.stream().map(start -> CompletableFuture.supplyAsync(() -> {
            try {
                return start.call();
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        })).toList();
        List<PackagedApp> apps = new ArrayList<>();
        Exception failure = null;
        for (CompletableFuture<PackagedApp> app : started) {
            try {
                apps.add(app.join());
            } catch (CompletionException e) {
                failure = failure != null ? failure : e.getCause() instanceof Exception cause ? cause : e;
            }
        }
        if (failure != null) {
            for (PackagedApp app : apps) {
                app.close();
            }
            throw failure;
        }
        return apps;
    }

    /** Waits (bounded) for the process to exit by itself and answers its exit code. */
    public int awaitExit() throws InterruptedException, IOException {
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            close();
            throw new AssertionError("the application did not exit; output:\n" + output());
        }
        return process.exitValue();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public String baseUrl() {
        return base;
    }

    /** SIGKILL: no shutdown hook, no draining, as when a machine dies. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts the same application again (same port and settings, log appended) and waits until it is ready. */
    public void restart() throws IOException {
        restart(Map.of());
    }

    /**
     * Starts the application again on the same port, with {@code changes} to its environment from now on (a
     * null value removes a variable), log appended, and waits until it is ready.
     */
    public void restart(Map<String, String> changes) throws IOException {
        if (process.isAlive()) {
            throw new IllegalStateException("still running");
        }
        change(builder.environment(), changes);
        builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        process = builder.start();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> !process.isAlive() || status("/q/health/ready") == 200);
        if (!process.isAlive()) {
            throw new AssertionError("the application exited with " + process.exitValue() + ":\n" + output());
        }
    }

    /** Puts {@code changes} into {@code env}; a null value removes the variable. */
    private static void change(Map<String, String> env, Map<String, String> changes) {
        changes.forEach((name, value) -> {
            if (value == null) {
                env.remove(name);
            } else {
                env.put(name, value);
            }
        });
    }

    /** Everything the process wrote so far, stdout and stderr. */
    public String output() throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    public Path log() {
        return log;
    }

    public int status(String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    public HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
    }

    public HttpResponse<String> send(HttpRequest request) throws Exception {
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** GET {@code path} with {@code Authorization: Bearer <apiKey>} (none when null). */
    public HttpResponse<String> get(String path, String apiKey) throws Exception {
        HttpRequest.Builder request = request(path);
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        return send(request.build());
    }

    /** A JSON POST with an Idempotency-Key and {@code Authorization: Bearer <apiKey>} (none when null). */
    public HttpResponse<String> post(String path, String apiKey, String idempotencyKey, String body) throws Exception {
        HttpRequest.Builder request = request(path).header("Content-Type", "application/json")
                .header("Idempotency-Key", idempotencyKey).POST(HttpRequest.BodyPublishers.ofString(body));
        if (apiKey != null) {
            request.header("Authorization", "Bearer " + apiKey);
        }
        return send(request.build());
    }

    /** Stops the process as an operator does (SIGTERM), forcibly if it does not stop. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String javaExecutable() {
        return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    }
}
