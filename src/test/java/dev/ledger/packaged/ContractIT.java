package dev.ledger.packaged;

import dev.ledger.testing.ApiClient;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import static dev.ledger.testing.LedgerApi.EXPIRES;
import static dev.ledger.testing.LedgerApi.keyExpiry;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP contract, black-box, against the packaged application: the jar in {@code ./mvnw verify},
 * the native executable with {@code -Dnative}. Every answer shape is checked, because in a native
 * executable each is a class Jackson must be able to write (views, page, problem).
 */
@QuarkusIntegrationTest
@WithTestResource(value = PackagedAppConfig.class, scope = TestResourceScope.MATCHING_RESOURCES)
class ContractIT {
    private static final ApiClient CLIENT = PackagedAppConfig.CLIENT;
    private static final String UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

    @Test
    void opensAnAccountAndAppliesDebitsAndCredits() {
        Response opened = CLIENT.openAccount(ApiClient.newKey(), "EUR");
        assertEquals(201, opened.statusCode(), opened.asString());
        assertEquals("application/json", opened.contentType());
        String id = opened.path("id");
        assertTrue(id.matches(UUID), id);
        assertEquals("/accounts/" + id, opened.header("Location").replaceFirst("^https?://[^/]+", ""));
        assertEquals("EUR", opened.path("currency"));
        assertEquals(0, (int) opened.path("balance"));
        assertEquals(0, (int) opened.path("lastSequence"));
        assertNotNull(opened.path("createdAt"));
        assertNull(opened.header("Idempotent-Replayed"));

        Response credit = CLIENT.postTransaction(id, ApiClient.newKey(),
                "{\"type\":\"CREDIT\",\"amount\":10000,\"sequence\":1,\"reference\":\"invoice 7\"}");
        assertEquals(201, credit.statusCode(), credit.asString());
        String txId = credit.path("id");
        assertEquals("/accounts/" + id + "/transactions/" + txId, credit.header("Location").replaceFirst("^https?://[^/]+", ""));
        assertEquals(id, credit.path("accountId"));
        assertEquals("CREDIT", credit.path("type"));
        assertEquals(10000, (int) credit.path("amount"));
        assertEquals(1, (int) credit.path("sequence"));
        assertEquals("invoice 7", credit.path("reference"));
        assertEquals(10000, (int) credit.path("balanceAfter"));

        Response debit = CLIENT.postTransaction(id, ApiClient.newKey(), transaction("DEBIT", 2500, 2));
        assertEquals(201, debit.statusCode(), debit.asString());
        assertEquals(7500, (int) debit.path("balanceAfter"));

        Response account = CLIENT.account(id);
        assertEquals(200, account.statusCode());
        assertEquals(7500, (int) account.path("balance"));
        assertEquals(2, (int) account.path("lastSequence"));

        Response one = CLIENT.transaction(id, txId);
        assertEquals(200, one.statusCode());
        assertEquals(credit.asString(), one.asString());

        Response firstPage = CLIENT.given().queryParam("limit", 1).when().get("/accounts/" + id + "/transactions").andReturn();
        assertEquals(200, firstPage.statusCode());
        assertEquals(List.of(1), firstPage.path("items.sequence"));
        assertEquals(1, (int) firstPage.path("next"));
        Response lastPage = CLIENT.given().queryParam("after", 1).when().get("/accounts/" + id + "/transactions").andReturn();
        assertEquals(List.of(2), lastPage.path("items.sequence"));
        assertNull(lastPage.path("next"));
    }

    @Test
    void answersBusinessRefusalsAsProblems() {
        String id = CLIENT.newAccount();
        CLIENT.credit(id, 100, 5);

        Response poor = CLIENT.postTransaction(id, ApiClient.newKey(), transaction("DEBIT", 101, 6));
        assertProblem(poor, 422, "insufficient-funds");
        assertEquals(100, (int) poor.path("balance"));

        Response stale = CLIENT.postTransaction(id, ApiClient.newKey(), transaction("CREDIT", 1, 5));
        assertProblem(stale, 409, "stale-sequence");
        assertEquals(5, (int) stale.path("lastSequence"));

        assertProblem(CLIENT.postTransaction("00000000-0000-0000-0000-000000000001", ApiClient.newKey(), transaction("CREDIT", 1, 1)),
                404, "account-not-found");
        assertProblem(CLIENT.account("00000000-0000-0000-0000-000000000001"), 404, "account-not-found");
        assertProblem(CLIENT.transaction(id, "00000000-0000-0000-0000-000000000002"), 404, "transaction-not-found");
        assertEquals(100, CLIENT.balance(id));
    }

    @Test
    void refusesBadInputBeforeAnythingIsApplied() {
        String id = CLIENT.newAccount();
        assertProblem(CLIENT.given().contentType(ContentType.JSON).body(transaction("CREDIT", 1, 1))
                .when().post("/accounts/" + id + "/transactions").andReturn(), 400, "idempotency-key-missing");
        assertProblem(CLIENT.postTransaction(id, "bad key", transaction("CREDIT", 1, 1)), 400, "idempotency-key-invalid");
        assertProblem(CLIENT.postTransaction(id, ApiClient.newKey(), "{\"type\":\"CREDIT\",\"amount\":1.5,\"sequence\":1}"),
                400, "invalid-request");
        assertProblem(CLIENT.postTransaction(id, ApiClient.newKey(), "{\"type\":\"CREDIT\""), 400, "invalid-request");
        assertProblem(CLIENT.given().contentType(ContentType.TEXT).header("Idempotency-Key", ApiClient.newKey())
                .body("{}").when().post("/accounts").andReturn(), 415, "unsupported-media-type");
        assertProblem(CLIENT.given().when().get("/accounts/not-a-uuid").andReturn(), 404, "account-not-found");
        assertProblem(CLIENT.given().when().get("/nowhere").andReturn(), 404, "not-found");
        assertProblem(CLIENT.given().when().delete("/accounts/" + id).andReturn(), 405, "method-not-allowed");
        assertEquals(0, CLIENT.entryCount(id));
    }

    @Test
    void refusesRequestsWithoutAValidApiKey() {
        for (Response refused : List.of(
                RestAssured.given().when().get("/accounts/00000000-0000-0000-0000-000000000001").andReturn(),
                RestAssured.given().header("Authorization", "Bearer not-a-configured-key-0123456789")
                        .contentType(ContentType.JSON).header("Idempotency-Key", ApiClient.newKey())
                        .body("{\"currency\":\"EUR\"}").when().post("/accounts").andReturn())) {
            assertProblem(refused, 401, "unauthorized");
            assertEquals("Bearer realm=\"ledger\"", refused.header("WWW-Authenticate"));
        }
    }

    @Test
    void keepsEachClientsAccountsToItself() {
        String id = CLIENT.newAccount();
        assertProblem(PackagedAppConfig.OTHER_CLIENT.account(id), 404, "account-not-found");
        assertProblem(PackagedAppConfig.OTHER_CLIENT.postTransaction(id, ApiClient.newKey(), transaction("CREDIT", 1, 1)),
                404, "account-not-found");
        assertEquals(0, CLIENT.balance(id));
    }

    @Test
    void looksKeysUpAndSaysWhenTheyExpire() {
        String key = ApiClient.newKey();
        Response opened = CLIENT.openAccount(key, "EUR");
        Instant expires = keyExpiry(opened);
        assertNotNull(expires, "no Idempotency-Expires on a recorded answer");
        assertEquals(opened.header(EXPIRES), CLIENT.openAccount(key, "EUR").header(EXPIRES), "the replay's");

        Response found = CLIENT.lookup(key);
        assertEquals(200, found.statusCode(), found.asString());
        assertTrue(found.contentType().startsWith("application/json"), found.contentType());
        assertEquals(Map.of("key", key, "state", "completed", "method", "POST", "path", "/accounts", "status", 201,
                        "location", "/accounts/" + opened.path("id")),
                Map.of("key", found.path("key"), "state", found.path("state"), "method", found.path("method"),
                        "path", found.path("path"), "status", found.path("status"), "location", found.path("location")));
        assertEquals(expires, Instant.parse(found.<String>path("expiresAt")).truncatedTo(ChronoUnit.SECONDS));
        assertNotNull(found.path("createdAt"));

        assertProblem(PackagedAppConfig.OTHER_CLIENT.lookup(key), 404, "idempotency-key-not-found");
        assertProblem(CLIENT.lookupPath("%22" + key + "%22"), 400, "idempotency-key-invalid");
    }

    @Test
    void servesTheOperatingSurfaceWithoutAKey() {
        Response live = RestAssured.given().when().get("/q/health/live").andReturn();
        assertEquals(200, live.statusCode(), live.asString());
        assertEquals("UP", live.path("status"));

        // The paths the images and the Kubernetes probes use (DeploymentFilesIT).
        for (String probe : List.of(DeploymentFilesIT.LIVE, DeploymentFilesIT.READY, DeploymentFilesIT.STARTED)) {
            assertEquals(200, RestAssured.given().when().get(probe).statusCode(), probe);
        }
        Response ready = RestAssured.given().when().get("/q/health/ready").andReturn();
        assertEquals(200, ready.statusCode(), ready.asString());
        assertEquals("UP", ready.path("status"));
        List<Map<String, Object>> checks = ready.path("checks");
        assertTrue(checks.stream().anyMatch(c -> String.valueOf(c.get("name")).contains("Redis")), checks.toString());
        assertTrue(checks.stream().anyMatch(c -> String.valueOf(c.get("name")).contains("PostgreSQL")), checks.toString());

        Response openApi = RestAssured.given().queryParam("format", "json").when().get("/q/openapi").andReturn();
        assertEquals(200, openApi.statusCode());
        Map<String, Object> paths = openApi.path("paths");
        assertTrue(paths.containsKey("/accounts/{id}/transactions"), paths.keySet().toString());

        assertEquals(200, RestAssured.given().when().get("/q/swagger-ui/").statusCode());
        Response metrics = RestAssured.given().when().get("/q/metrics").andReturn();
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.asString().contains("http_server_requests"), "no HTTP metrics");
        assertFalse(metrics.asString().contains(PackagedAppConfig.CLIENT.apiKey()));
    }

    static void assertProblem(Response response, int status, String slug) {
        assertEquals(status, response.statusCode(), response.asString());
        assertEquals("application/problem+json", response.contentType());
        assertEquals("/problems/" + slug, response.path("type"), response.asString());
        assertEquals(status, (int) response.path("status"));
        assertNotNull(response.path("title"));
        assertNotNull(response.path("detail"));
    }
}
