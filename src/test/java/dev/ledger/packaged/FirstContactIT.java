package dev.ledger.packaged;

import dev.ledger.testing.PackagedApp;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The README's first command and first payment, as a newcomer runs them: {@code ./mvnw quarkus:dev}
 * in a copy of the project (its own {@code target/}, so the build under test is not disturbed),
 * then the README's first-payment block pasted into bash as it stands, then {@code q}. Dev mode must
 * come up with nothing created beforehand (its schema is Flyway's to create), log no WARN or ERROR
 * a newcomer would have to ignore, and the block must open an account, apply the credit once and
 * show the replay. The only liberties taken: a free port instead of 8080 and a schema and Redis
 * database of the test's own, so that a developer's own dev mode data is left alone.
 */
class FirstContactIT {
    private static final Path PROJECT = Path.of("").toAbsolutePath();
    private static final Path COPY = PROJECT.resolve("target/first-contact");
    private static final String SCHEMA = "ledger_first_contact";
    private static final Pattern LISTENING = Pattern.compile("Listening on: http://[^:]+:(\\d+)");
    /** Quarkus' log lines at WARN or ERROR, and Maven's own warnings and errors. */
    private static final Pattern COMPLAINT = Pattern.compile("^\\S+ \\S+ (WARN|ERROR) |^\\[(WARNING|ERROR)]");

    @Test
    void devModeStartsCleanlyAndTheReadmeFirstPaymentPastesAsItIs() throws Exception {
        Assumptions.assumeTrue(PackagedApp.configured(), "needs the local servers (the local-services profile)");
        copyProject();
        dropSchema();
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        RedisDatabase redis = RedisDatabase.ofApplication();
        redis.flush();

        ProcessBuilder builder = new ProcessBuilder("./mvnw", "-B", "quarkus:dev", "-Ddebug=false",
                "-Dquarkus.http.port=" + port, "-Ddev.pg-schema=" + SCHEMA, "-Ddev.redis-db=" + redis.database())
                .directory(COPY.toFile())
                .redirectErrorStream(true);
        builder.environment().keySet().removeIf(name -> name.startsWith("QUARKUS_") || name.startsWith("LEDGER_"));
        List<String> output = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch listening = new CountDownLatch(1);
        System.out.println("[first-contact] ./mvnw quarkus:dev in " + COPY + " (compiles, then starts; about a minute)");
        Process dev = builder.start();
        Thread reader = new Thread(() -> read(dev, output, listening), "first-contact-output");
        reader.start();
        try {
            if (!listening.await(5, TimeUnit.MINUTES) || !dev.isAlive()) {
                fail("dev mode did not start:\n" + String.join("\n", output));
            }
            System.out.println("[first-contact] dev mode listening on " + port + "; pasting the README's first payment");

            String block = firstPaymentBlock().replace("localhost:8080", "localhost:" + port);
            Process bash = new ProcessBuilder("bash", "-c", block).redirectErrorStream(true).start();
            String pasted = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(bash.waitFor(60, TimeUnit.SECONDS), "the first-payment commands did not finish");
            System.out.println("[first-contact] the block printed:\n" + pasted);

            assertEquals(0, bash.exitValue(), pasted);
            assertTrue(pasted.matches("(?s).*opened account [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\R.*"), pasted);
            assertEquals(2, count(pasted, "(?m)^HTTP/1\\.1 201 "), "two 201 answers to the credit and its retry:\n" + pasted);
            assertEquals(1, count(pasted, "(?im)^Idempotent-Replayed: true"), "the retry, and only it, is a replay:\n" + pasted);
            assertTrue(pasted.contains("\"balance\":10000"), "the credit applied once:\n" + pasted);

            List<String> complaints = output.stream().filter(line -> COMPLAINT.matcher(line).find()).toList();
            assertEquals(List.of(), complaints, "dev mode logged warnings or errors:\n" + String.join("\n", output));

            System.out.println("[first-contact] stopping dev mode with q, as the README says");
            OutputStream stdin = dev.getOutputStream();
            stdin.write("q".getBytes(StandardCharsets.US_ASCII));
            stdin.flush();
            assertTrue(dev.waitFor(60, TimeUnit.SECONDS), "dev mode did not stop on q:\n" + String.join("\n", output));
        } finally {
            dev.descendants().forEach(ProcessHandle::destroyForcibly);
            dev.destroyForcibly();
            reader.join(10_000);
            Files.write(PROJECT.resolve("target/first-contact.log"), output);
        }
    }

    private static void read(Process process, List<String> output, CountDownLatch listening) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                output.add(line);
                Matcher matcher = LISTENING.matcher(line);
                if (matcher.find()) {
                    listening.countDown();
                }
            }
        } catch (IOException ignored) {
            // the process was destroyed
        } finally {
            listening.countDown();
        }
    }

    /** The bash block between the README's first-payment markers, without its fences. */
    static String firstPaymentBlock() throws IOException {
        String readme = Files.readString(PROJECT.resolve("README.md"));
        Matcher block = Pattern.compile("<!-- first-payment:start -->\\s*```bash\\n(.*?)```\\s*<!-- first-payment:end -->",
                Pattern.DOTALL).matcher(readme);
        assertTrue(block.find(), "README.md has no first-payment block between its markers");
        return block.group(1);
    }

    private static int count(String text, String regex) {
        Matcher matcher = Pattern.compile(regex).matcher(text);
        int count = 0;
        while (matcher.find()) {
            count++;
        }
        return count;
    }

    /** What a clone holds that dev mode reads: the build, the wrapper and the main sources. */
    private static void copyProject() throws IOException {
        if (Files.exists(COPY)) {
            try (Stream<Path> old = Files.walk(COPY)) {
                old.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(path -> path.toFile().delete());
            }
        }
        for (String part : List.of("pom.xml", "mvnw", ".mvn", "src/main")) {
            Path source = PROJECT.resolve(part);
            try (Stream<Path> files = Files.walk(source)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Path target = COPY.resolve(PROJECT.relativize(file).toString());
                    if (Files.isDirectory(file)) {
                        Files.createDirectories(target);
                    } else {
                        Files.createDirectories(target.getParent());
                        Files.copy(file, target, StandardCopyOption.COPY_ATTRIBUTES);
                    }
                }
            }
        }
    }

    /** Dev mode starts from nothing: no schema, as on a fresh machine. */
    private static void dropSchema() throws Exception {
        try (Connection admin = DriverManager.getConnection("jdbc:postgresql://" + PackagedApp.PG_HOST + "/postgres",
                PackagedApp.PG_USER, "");
             Statement sql = admin.createStatement()) {
            sql.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
        }
    }
}
