package dev.ledger.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.problem.ProblemType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The answers HAProxy gives of its own, with the shipped configuration (src/main/haproxy/haproxy.cfg,
 * as .ci/balanced writes it on local ports) and one stand-in instance the test controls: when no
 * instance can take a request, and when the instance dies before answering, a client gets the API's
 * 503 (problem body, {@code Retry-After}), which it retries with the same key, never a bare or HTML
 * 502/503 (a rolling restart on a busy machine once met one; a black-box pass met 502 pages). And the
 * request headers an instance answers itself (431 with a problem body past 16 KiB) reach it.
 */
class BalancerAnswersIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Path dir;
    /** HAProxy's port; its one instance's is the next. */
    private static int port;
    private static Process haproxy;

    @BeforeAll
    static void balancerWithoutItsInstance() throws Exception {
        dir = Files.createTempDirectory("balancer-answers-");
        port = twoFreePorts();
        ProcessBuilder writer = new ProcessBuilder("bash", ".ci/balanced", "config").redirectError(ProcessBuilder.Redirect.INHERIT);
        writer.environment().put("BALANCED_PORT", Integer.toString(port));
        writer.environment().put("BALANCED_INSTANCES", "1");
        writer.environment().put("BALANCED_DIR", dir.toString());
        Process written = writer.start();
        Files.write(dir.resolve("haproxy.cfg"), written.getInputStream().readAllBytes());
        assertEquals(0, written.waitFor(), ".ci/balanced config");
        haproxy = new ProcessBuilder("haproxy", "-db", "-f", dir.resolve("haproxy.cfg").toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("haproxy.log").toFile()).start();
    }

    @AfterAll
    static void stop() throws Exception {
        haproxy.destroy();
        haproxy.waitFor();
    }

    @Test
    void noInstanceAvailableIsTheApis503() {
        // nothing listens on the instance's port
        HttpResponse<String> answer = await().atMost(Duration.ofSeconds(20)).ignoreExceptions()
                .until(() -> send(post("no-instance")), response -> true);
        assertTheApis503(answer);
    }

    @Test
    void anInstanceThatDiesBeforeAnsweringIsTheApis503AndLargeHeadersReachIt() throws Exception {
        try (StandInInstance instance = new StandInInstance(port + 1)) {
            // HAProxy sees it ready
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .until(() -> send(get("/q/health/ready", 0)).statusCode() == 200);

            HttpResponse<String> died = send(post("died"));
            assertTrue(instance.posts.get() >= 1, "the POST reached the instance");
            assertTheApis503(died);
            assertTrue(JSON.readTree(died.body()).path("detail").asText().contains("may have been applied"),
                    "it may have been applied before the instance died: " + died.body());

            // 20,000 bytes of headers: the instance's to refuse (431 with a problem body), not HAProxy's
            HttpResponse<String> large = send(get("/accounts", 20_000));
            assertEquals(200, large.statusCode(), large.body());
            assertEquals("stand-in", large.body());
        }
    }

    private static void assertTheApis503(HttpResponse<String> answer) {
        assertEquals(503, answer.statusCode(), answer.body());
        assertEquals("1", answer.headers().firstValue("Retry-After").orElse(null));
        assertEquals("application/problem+json", answer.headers().firstValue("Content-Type").orElse(null));
        JsonNode problem;
        try {
            problem = JSON.readTree(answer.body());
        } catch (IOException e) {
            throw new AssertionError("not a JSON problem: " + answer.body(), e);
        }
        assertEquals(ProblemType.SERVICE_UNAVAILABLE.uri(), problem.path("type").asText());
        assertEquals(ProblemType.SERVICE_UNAVAILABLE.title(), problem.path("title").asText());
        assertEquals(503, problem.path("status").asInt());
        assertTrue(problem.path("detail").asText().contains("Retry with the same Idempotency-Key"), answer.body());
    }

    /**
     * On a connection of its own: the stand-in closes every connection, and HAProxy closes the client's
     * after that, which the JDK client may not notice before it sends the next request on it.
     */
    private static HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
                .send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest post(String key) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/accounts"))
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{\"currency\":\"EUR\"}")).build();
    }

    private static HttpRequest get(String path, int padding) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET();
        if (padding > 0) {
            request.header("X-Pad", "a".repeat(padding));
        }
        return request.build();
    }

    /** A port that is free, and the next one too (at this moment). */
    private static int twoFreePorts() throws IOException {
        while (true) {
            try (ServerSocket first = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                 ServerSocket next = new ServerSocket(first.getLocalPort() + 1, 1, InetAddress.getLoopbackAddress())) {
                return first.getLocalPort();
            } catch (IOException taken) {
                // the next port was taken: another pair
            }
        }
    }

    /**
     * Stands in for a ledger instance on a socket: answers every GET 200 (readiness included) and
     * closes every POST's connection without an answer, as an instance killed mid-request does.
     */
    private static final class StandInInstance implements AutoCloseable {
        private final ServerSocket socket;
        private final AtomicInteger posts = new AtomicInteger();
        private final Thread acceptor;

        StandInInstance(int port) throws IOException {
            this.socket = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
            this.acceptor = new Thread(this::serve, "stand-in-instance");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private void serve() {
            while (!socket.isClosed()) {
                try (Socket connection = socket.accept()) {
                    String head = readHead(connection.getInputStream());
                    if (head.startsWith("POST ")) {
                        posts.incrementAndGet();
                        continue; // closed without an answer
                    }
                    connection.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n"
                            + "Connection: close\r\n\r\nstand-in").getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    // the socket closed, or the peer left
                }
            }
        }

        private static String readHead(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int matched = 0;
            int b;
            byte[] end = {'\r', '\n', '\r', '\n'};
            while (matched < end.length && (b = in.read()) >= 0) {
                head.write(b);
                matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            return head.toString(StandardCharsets.US_ASCII);
        }

        @Override
        public void close() throws Exception {
            socket.close();
            acceptor.join(5_000);
        }
    }
}
