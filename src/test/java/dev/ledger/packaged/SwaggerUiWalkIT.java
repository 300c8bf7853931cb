package dev.ledger.packaged;

import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Swagger UI of the packaged application as a person uses it, in a real browser: the Playwright
 * script {@code src/test/browser/swagger-ui-walk.mjs} drives Debian's Chromium headless through
 * authorize, open an account, post a credit, execute it again (the replay), the errors and a log-out,
 * asserting what the page shows and saving a screenshot per step under {@code target/swagger-ui-walk/}.
 * {@code .ci/browser} (idempotent, quick when nothing is missing) installs Chromium and the script's
 * pinned node modules first, so that {@code ./mvnw verify} needs nothing run by hand before it.
 */
@QuarkusIntegrationTest
@WithTestResource(value = PackagedAppConfig.class, scope = TestResourceScope.MATCHING_RESOURCES)
class SwaggerUiWalkIT {
    private static final Path PROJECT = Path.of("").toAbsolutePath();
    private static final Path INSTALL = PROJECT.resolve(".ci/browser");
    private static final Path WALK = PROJECT.resolve("src/test/browser/swagger-ui-walk.mjs");
    private static final Path ASYNCAPI_WALK = PROJECT.resolve("src/test/browser/asyncapi-ui-walk.mjs");
    private static final Path SCREENSHOTS = PROJECT.resolve("target/swagger-ui-walk");
    /** One screenshot per step of the walk, in order: a step that no longer runs fails this test. */
    private static final List<String> STEPS = List.of("01-loaded", "02-authorized", "03-account-opened",
            "04-credit-posted", "05-credit-replayed", "06-key-reused", "07-insufficient-funds",
            "08-invalid-request", "09-account-read", "10-logged-out-401");

    @Test
    void aPersonCanAuthorizeOpenPostReplayAndReadEachErrorInSwaggerUi() throws Exception {
        Run install = run("browser-install", Duration.ofMinutes(10), "bash", INSTALL.toString());
        if (install.exit != 0) {
            fail("The Swagger UI walk needs Debian's chromium (/usr/bin/chromium) and the node modules of "
                    + "src/test/browser; .ci/browser could not install them (exit " + install.exit + ", root or sudo "
                    + "and the Debian and npm registries are needed):\n" + install.tail);
        }
        deleteRecursively(SCREENSHOTS);

        Run walk = run("swagger-ui-walk", Duration.ofMinutes(3), "node", WALK.toString(),
                PackagedAppConfig.baseUrl().toString(), PackagedAppConfig.CLIENT.apiKey(), SCREENSHOTS.toString());

        assertEquals(0, walk.exit, "the Swagger UI walk failed (screenshots in " + SCREENSHOTS + "):\n" + walk.tail);
        for (String step : STEPS) {
            Path shot = SCREENSHOTS.resolve(step + ".png");
            assertTrue(Files.isRegularFile(shot) && Files.size(shot) > 0, "no screenshot " + shot);
        }
    }

    /**
     * The AsyncAPI page ({@code /q/asyncapi-ui}) as a person reads it: {@code asyncapi-ui-walk.mjs} checks
     * that every channel of {@code src/main/resources/asyncapi.yaml} is shown with its address, its
     * operations and its messages, with no script error and no request to another host.
     */
    @Test
    void aPersonCanReadEveryChannelOfTheMessageInterface() throws Exception {
        Run install = run("browser-install", Duration.ofMinutes(10), "bash", INSTALL.toString());
        assertEquals(0, install.exit, install.tail);
        Path shots = PROJECT.resolve("target/asyncapi-ui-walk");
        deleteRecursively(shots);
        List<String> command = new java.util.ArrayList<>(List.of("node", ASYNCAPI_WALK.toString(),
                PackagedAppConfig.baseUrl().toString(), shots.toString()));
        var channels = dev.ledger.testing.AsyncApiContract.DOCUMENT.path("channels").fields();
        while (channels.hasNext()) {
            var channel = channels.next();
            command.add(channel.getKey() + "=" + channel.getValue().path("address").asText());
        }
        assertTrue(command.size() >= 2 + 8, "the document's channels: " + command);
        Run walk = run("asyncapi-ui-walk", Duration.ofMinutes(2), command.toArray(String[]::new));
        assertEquals(0, walk.exit, "the AsyncAPI page walk failed (screenshots in " + shots + "):\n" + walk.tail);
    }

    private record Run(int exit, String tail) {
    }

    /**
     * Runs a command in the project directory, streaming its output (stdout and stderr) line by line
     * to this test's output; answers its exit code and last lines. Killed with its children (the
     * browser) after {@code timeout}, answering exit -1.
     */
    private static Run run(String name, Duration timeout, String... command) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).directory(PROJECT.toFile()).redirectErrorStream(true);
        builder.environment().put("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1");
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            return new Run(-1, "cannot start " + String.join(" ", command) + ": " + e.getMessage());
        }
        Deque<String> tail = new ArrayDeque<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    System.out.println("[" + name + "] " + line);
                    synchronized (tail) {
                        tail.addLast(line);
                        if (tail.size() > 40) {
                            tail.removeFirst();
                        }
                    }
                }
            } catch (IOException e) {
                // the stream closes under the reader when a timed-out process is killed
            }
        }, name + "-output");
        reader.start();
        long started = System.nanoTime();
        boolean finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!finished) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly().waitFor();
        }
        reader.join(Duration.ofSeconds(10).toMillis());
        System.out.printf("[%s] %s in %d ms%n", name, finished ? "exit " + process.exitValue() : "killed after " + timeout,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        synchronized (tail) {
            String lines = String.join("\n", tail);
            return new Run(finished ? process.exitValue() : -1, finished ? lines : lines + "\n(killed after " + timeout + ")");
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}
