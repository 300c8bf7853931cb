package dev.ledger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The packaged application as an operator runs it: {@code java -jar target/quarkus-app/quarkus-run.jar}
 * configured only by environment variables (the standard Quarkus ones and {@code LEDGER_API_KEYS}),
 * against an empty database that it must migrate itself. Where Docker runs instead of local servers
 * (Dev Services), this test is skipped.
 */
class PackagedApplicationIT {
    private static final String API_KEY = "packaged-it-key-0123456789abcdef";
    private static PackagedApp app;

    @BeforeAll
    static void startThePackagedApplication() throws Exception {
        assumeTrue(PackagedApp.configured(), "no local servers configured (tests.it.pg-host): skipped where Dev Services run");
        PackagedApp.recreateDatabase();
        app = PackagedApp.start(Map.of("LEDGER_API_KEYS", "it:" + PackagedApp.sha256Hex(API_KEY)), "packaged-application-it.log");
    }

    @AfterAll
    static void stop() throws Exception {
        if (app != null) {
            app.close();
        }
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
    void servesSwaggerUiOpenApiHealthAndMetricsWithoutAKey() {
        assertEquals(200, app.status("/q/swagger-ui/"));
        assertEquals(200, app.status("/q/openapi"));
        assertEquals(200, app.status("/q/health/live"));
        assertEquals(200, app.status("/q/metrics"));
    }
}
