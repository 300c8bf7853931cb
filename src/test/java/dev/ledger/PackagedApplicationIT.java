package dev.ledger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The packaged application as an operator runs it: {@code java -jar target/quarkus-app/quarkus-run.jar}
 * configured only by the standard Quarkus environment variables, against an empty database that
 * it must migrate itself. The servers come from the system properties {@code ledger.it.*}, which
 * the pom's {@code local-services} profile sets; where Docker runs instead (Dev Services, no
 * local servers), this test is skipped.
 */
class PackagedApplicationIT {
    private static final String PG_HOST = System.getProperty("ledger.it.pg-host");
    private static final String PG_USER = System.getProperty("ledger.it.pg-user", "postgres");
    private static final String REDIS = System.getProperty("ledger.it.redis", "redis://127.0.0.1:6379/2");
    private static final String DATABASE = System.getProperty("ledger.it.pg-db", "ledger_packaged_it");

    private static PackagedApp app;
    private static String base;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void startThePackagedApplication() throws Exception {
        assumeTrue(PG_HOST != null, "no local servers configured (ledger.it.pg-host): skipped where Dev Services run");
        try (Connection admin = DriverManager.getConnection("jdbc:postgresql://" + PG_HOST + "/postgres", PG_USER, "");
             Statement sql = admin.createStatement()) {
            sql.execute("DROP DATABASE IF EXISTS " + DATABASE + " WITH (FORCE)");
            sql.execute("CREATE DATABASE " + DATABASE);
        }
        app = new PackagedApp(Map.of(
                "QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + PG_HOST + "/" + DATABASE,
                "QUARKUS_DATASOURCE_JDBC_URL", "jdbc:postgresql://" + PG_HOST + "/" + DATABASE,
                "QUARKUS_DATASOURCE_USERNAME", PG_USER,
                "QUARKUS_REDIS_HOSTS", REDIS), new File("target/packaged-application-it.log")).start();
        base = app.baseUrl();
    }

    @AfterAll
    static void stop() throws Exception {
        if (app != null) {
            app.close();
        }
    }

    private static int status(String path) {
        return app.status(path);
    }

    private static HttpResponse<String> post(String path, String key, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void migratesItsEmptyDatabaseAtStart() throws Exception {
        try (Connection db = DriverManager.getConnection("jdbc:postgresql://" + PG_HOST + "/" + DATABASE, PG_USER, "");
             Statement sql = db.createStatement();
             ResultSet rows = sql.executeQuery("SELECT version FROM flyway_schema_history WHERE success ORDER BY installed_rank")) {
            assertTrue(rows.next(), "no migration applied");
            assertEquals("1", rows.getString(1));
        }
    }

    @Test
    void servesTheLedgerWithReplays() throws Exception {
        String key = "packaged-" + System.nanoTime();
        HttpResponse<String> opened = post("/accounts", key, "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        String location = opened.headers().firstValue("Location").orElseThrow();
        assertTrue(location.matches("/accounts/[0-9a-f-]{36}"), location);

        HttpResponse<String> credit = post(location + "/transactions", key + "-credit",
                "{\"type\":\"CREDIT\",\"amount\":2500,\"sequence\":1}");
        assertEquals(201, credit.statusCode(), credit.body());
        HttpResponse<String> replay = post(location + "/transactions", key + "-credit",
                "{\"type\":\"CREDIT\",\"amount\":2500,\"sequence\":1}");
        assertEquals(credit.body(), replay.body());
        assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));

        HttpResponse<String> account = HTTP.send(HttpRequest.newBuilder(URI.create(base + location)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, account.statusCode());
        assertTrue(account.body().contains("\"balance\":2500"), account.body());
    }

    @Test
    void servesSwaggerUiOpenApiHealthAndMetrics() {
        assertEquals(200, status("/q/swagger-ui/"));
        assertEquals(200, status("/q/openapi"));
        assertEquals(200, status("/q/health/live"));
        assertEquals(200, status("/q/metrics"));
    }
}
