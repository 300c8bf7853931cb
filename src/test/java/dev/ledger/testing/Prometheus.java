package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A Prometheus server of a test's own (Debian's {@code prometheus}, which {@code .ci/services} installs): on a
 * free port of 127.0.0.1, with its data in {@code directory}, scraping one application's {@code /q/metrics}
 * every second and evaluating the given rules every second. Stopped by its process when closed.
 */
public final class Prometheus implements AutoCloseable {
    private static final String BINARY = "/usr/bin/prometheus";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final String base;

    private Prometheus(Process process, String base) {
        this.process = process;
        this.base = base;
    }

    public static boolean installed() {
        return new File(BINARY).canExecute();
    }

    /** Starts it scraping {@code target} (a base URL) with {@code rules}, and waits until it is ready. */
    public static Prometheus start(Path directory, String target, String rules) throws IOException {
        Files.createDirectories(directory);
        Path data = directory.resolve("data");
        if (Files.exists(data)) {
            try (var files = Files.walk(data)) {
                files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
        Files.writeString(directory.resolve("rules.yml"), rules);
        URI scraped = URI.create(target);
        Files.writeString(directory.resolve("prometheus.yml"), """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                  evaluation_interval: 1s
                rule_files: [rules.yml]
                scrape_configs:
                  - job_name: ledger
                    metrics_path: /q/metrics
                    static_configs:
                      - targets: ['%s:%d']
                """.formatted(scraped.getHost(), scraped.getPort()));
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Process process = new ProcessBuilder(BINARY, "--config.file=" + directory.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + data, "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(directory.resolve("prometheus.log").toFile()).start();
        Prometheus prometheus = new Prometheus(process, "http://127.0.0.1:" + port);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> !process.isAlive() || prometheus.status("/-/ready") == 200);
        if (!process.isAlive()) {
            throw new IllegalStateException("Prometheus exited: see " + directory.resolve("prometheus.log"));
        }
        return prometheus;
    }

    /** Whether its one target was scraped successfully last time. */
    public boolean targetUp() throws Exception {
        for (JsonNode target : get("/api/v1/targets").path("data").path("activeTargets")) {
            if ("up".equals(target.path("health").asText())) {
                return true;
            }
        }
        return false;
    }

    /** Whether alert {@code name} fires now. */
    public boolean firing(String name) throws Exception {
        return state(name).equals("firing");
    }

    /** Whether alert {@code name} is pending or firing now (an alert that resolved is neither). */
    public boolean active(String name) throws Exception {
        return !state(name).isEmpty();
    }

    private String state(String name) throws Exception {
        String state = "";
        for (JsonNode alert : get("/api/v1/alerts").path("data").path("alerts")) {
            if (name.equals(alert.path("labels").path("alertname").asText())) {
                state = "firing".equals(alert.path("state").asText()) ? "firing" : state.isEmpty() ? alert.path("state").asText() : state;
            }
        }
        return state;
    }

    /** How many series the instant query {@code promql} answers now; fails when Prometheus refuses it (a PromQL error). */
    public int series(String promql) throws Exception {
        JsonNode answer = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        if (!"success".equals(answer.path("status").asText())) {
            throw new AssertionError("Prometheus refused " + promql + ": " + answer.path("error").asText());
        }
        return answer.path("data").path("result").size();
    }

    private JsonNode get(String path) throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body());
    }

    private int status(String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
