package dev.ledger.packaged;

import dev.ledger.testing.PackagedApp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The packaged application as an operator runs it: {@code java -jar target/quarkus-app/quarkus-run.jar}
 * configured only by environment variables (the standard Quarkus ones and {@code LEDGER_API_KEYS}),
 * against an empty database that it must migrate itself; and restarted, as in a rolling deploy, on a
 * machine kept busy by other processes, then sent a burst of reads as soon as it reports ready. Where
 * Docker runs instead of local servers (Dev Services), this test is skipped.
 */
class PackagedApplicationIT {
    private static final String API_KEY = "packaged-it-key-0123456789abcdef";
    /** Processes that keep the machine's cores busy while the application starts and takes its first burst. */
    private static final int BUSY_PROCESSES = 4;
    private static final int BURST = 300;
    private static final int BURST_CONCURRENCY = 32;
    /** HTTP/1.1, one connection per request in flight, as a balancer talks to its instances. */
    private static final HttpClient HTTP_1_1 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static PackagedApp app;

    @BeforeAll
    static void startThePackagedApplication() throws Exception {
        assumeTrue(PackagedApp.configured(), "no local servers configured (tests.it.pg-host): skipped where Dev Services run");
        PackagedApp.recreateDatabase();
        Map<String, String> environment = new HashMap<>();
        environment.put("LEDGER_API_KEYS", "it:" + PackagedApp.sha256Hex(API_KEY));
        environment.put("LEDGER_WARM_UP_ROUNDS", null); // the warm-up is what a restart here is about
        environment.put("JAVA_TOOL_OPTIONS", null); // and the JVM as an operator runs it, both compilers
        app = PackagedApp.start(environment, "packaged-application-it.log");
    }

    @AfterAll
    static void stop() throws Exception {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void answersEveryReadOfABurstRightAfterARestartOnABusyMachine() throws Exception {
        String account = seedAnAccountWithTransactions(30);
        app.close();
        Map<Integer, Integer> firstBurst;
        List<Process> busy = new ArrayList<>();
        try {
            for (int i = 0; i < BUSY_PROCESSES; i++) {
                busy.add(new ProcessBuilder("yes").redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
            }
            app.restart();
            firstBurst = burst("/accounts/" + account + "/transactions");
        } finally {
            busy.forEach(Process::destroyForcibly);
        }
        System.out.println("[fresh-start] " + BURST + " reads at " + BURST_CONCURRENCY + " at a time right after readiness, "
                + BUSY_PROCESSES + " busy processes beside it: answers by status " + firstBurst);
        assertEquals(Map.of(200, BURST), firstBurst, "ready means able to answer within the bounds: no 503 from a fresh instance");
    }

    /** An account of client "it" with {@code entries} credits, written in the database directly. */
    private static String seedAnAccountWithTransactions(int entries) throws Exception {
        UUID account = UUID.randomUUID();
        try (Connection db = PackagedApp.database(); Statement sql = db.createStatement()) {
            sql.execute("INSERT INTO accounts (id, owner, currency, balance, last_sequence) VALUES ('" + account
                    + "', 'it', 'EUR', " + entries * 100 + ", " + entries + ")");
            for (int sequence = 1; sequence <= entries; sequence++) {
                sql.execute("INSERT INTO ledger_entries (id, account_id, type, amount, sequence, balance_after) VALUES ('"
                        + UUID.randomUUID() + "', '" + account + "', 'CREDIT', 100, " + sequence + ", " + sequence * 100 + ")");
            }
        }
        return account.toString();
    }

    private static Map<Integer, Integer> burst(String path) throws Exception {
        Map<Integer, Integer> byStatus = new ConcurrentSkipListMap<>();
        ExecutorService clients = Executors.newFixedThreadPool(BURST_CONCURRENCY);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < BURST; i++) {
                sent.add(clients.submit(() -> {
                    int status;
                    try {
                        status = HTTP_1_1.send(app.request(path).header("Authorization", "Bearer " + API_KEY).build(),
                                HttpResponse.BodyHandlers.discarding()).statusCode();
                    } catch (Exception e) {
                        status = -1;
                    }
                    byStatus.merge(status, 1, Integer::sum);
                }));
            }
            for (Future<?> request : sent) {
                request.get(2, TimeUnit.MINUTES);
            }
        } finally {
            clients.shutdownNow();
        }
        return byStatus;
    }

    @Test
    void migratesItsEmptyDatabaseAtStart() throws Exception {
        try (Connection db = PackagedApp.database();
             Statement sql = db.createStatement();
             ResultSet rows = sql.executeQuery("SELECT version FROM flyway_schema_history WHERE success ORDER BY installed_rank")) {
            assertTrue(rows.next(), "no migration applied");
            assertEquals("1", rows.getString(1));
        }
    }

    @Test
    void servesTheLedgerWithReplays() throws Exception {
        String key = "packaged-" + System.nanoTime();
        HttpResponse<String> opened = app.post("/accounts", API_KEY, key, "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        String location = opened.headers().firstValue("Location").orElseThrow();
        assertTrue(location.matches("/accounts/[0-9a-f-]{36}"), location);

        HttpResponse<String> credit = app.post(location + "/transactions", API_KEY, key + "-credit",
                "{\"type\":\"CREDIT\",\"amount\":2500,\"sequence\":1}");
        assertEquals(201, credit.statusCode(), credit.body());
        HttpResponse<String> replay = app.post(location + "/transactions", API_KEY, key + "-credit",
                "{\"type\":\"CREDIT\",\"amount\":2500,\"sequence\":1}");
        assertEquals(credit.body(), replay.body());
        assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));

        HttpResponse<String> account = app.get(location, API_KEY);
        assertEquals(200, account.statusCode());
        assertTrue(account.body().contains("\"balance\":2500"), account.body());
        assertEquals(401, app.get(location, null).statusCode());
    }

    @Test
    void servesSwaggerUiOpenApiAsyncApiHealthAndMetricsWithoutAKey() {
        assertEquals(200, app.status("/q/swagger-ui/"));
        assertEquals(200, app.status("/q/openapi"));
        assertEquals(200, app.status("/q/asyncapi"));
        assertEquals(200, app.status("/q/asyncapi-ui"));
        assertEquals(200, app.status("/q/health/live"));
        assertEquals(200, app.status("/q/metrics"));
    }
}
