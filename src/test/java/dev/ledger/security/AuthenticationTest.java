package dev.ledger.security;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.redis.RedisIdempotencyStore;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.Unauthorized;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Pattern;

import static dev.ledger.testing.ApiClient.DEV;
import static dev.ledger.testing.ApiClient.DEV_ROTATED;
import static dev.ledger.testing.ApiClient.OTHER;
import static dev.ledger.testing.ApiClient.newKey;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * API keys as API.md "Authentication and tenancy" has them: every request outside {@code /q/}
 * needs {@code Authorization: Bearer <key>}; anything else is a 401 {@code unauthorized} problem
 * with the Bearer challenge, decided before every other check, reserving and recording nothing.
 */
@QuarkusTest
class AuthenticationTest {
    private static final String UNKNOWN_KEY = "unknown-ledger-key-0123456789abcdef";
    private static final Pattern UUID_TEXT = Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    @Inject
    RedisDataSource redis;

    /** The whole 401 promise: status, challenge, problem body, no internals. */
    static void assertUnauthorized(Response response, String what) {
        Unauthorized.assertUnauthorized(response.statusCode(), response::header, response.asString(), what);
    }

    /** Authorization header values that are not a valid key (null: no header at all). */
    private static Map<String, List<String>> refusedCredentials() {
        Map<String, List<String>> refused = new LinkedHashMap<>();
        refused.put("missing", List.of());
        refused.put("Basic scheme", List.of("Basic " + java.util.Base64.getEncoder().encodeToString("dev:secret".getBytes(StandardCharsets.UTF_8))));
        refused.put("other scheme", List.of("Token " + DEV.apiKey()));
        refused.put("no scheme", List.of(DEV.apiKey()));
        refused.put("scheme only", List.of("Bearer"));
        refused.put("too short", List.of("Bearer " + "k".repeat(23)));
        refused.put("too long", List.of("Bearer " + "k".repeat(513)));
        refused.put("white space inside", List.of("Bearer dev-ledger-key 0123456789abcdef"));
        refused.put("non-ASCII", List.of("Bearer dev-ledger-key-0123456789abcdé"));
        refused.put("unknown key", List.of("Bearer " + UNKNOWN_KEY));
        refused.put("the hash instead of the key", List.of("Bearer " + HexFormat.of().formatHex(ApiKeys.sha256(DEV.apiKey()))));
        refused.put("the key with a changed last character", List.of("Bearer " + DEV.apiKey().substring(0, DEV.apiKey().length() - 1) + "0"));
        refused.put("two headers", List.of(DEV.authorization(), DEV.authorization()));
        return refused;
    }

    private static RequestSpecification with(List<String> authorization) {
        RequestSpecification request = RestAssured.given();
        for (String value : authorization) {
            request = request.header("Authorization", value);
        }
        return request;
    }

    /** One request to every endpoint (and to paths that are not endpoints), as the given request. */
    private static Map<String, Function<RequestSpecification, Response>> everyEndpoint(String account, String transactionId) {
        Map<String, Function<RequestSpecification, Response>> endpoints = new LinkedHashMap<>();
        endpoints.put("POST /accounts", r -> r.contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                .body("{\"currency\":\"EUR\"}").post("/accounts"));
        endpoints.put("GET /accounts/{id}", r -> r.get("/accounts/" + account));
        endpoints.put("POST /accounts/{id}/transactions", r -> r.contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                .body(transaction("CREDIT", 1, 99)).post("/accounts/" + account + "/transactions"));
        endpoints.put("GET /accounts/{id}/transactions", r -> r.get("/accounts/" + account + "/transactions"));
        endpoints.put("GET /accounts/{id}/transactions/{txId}", r -> r.get("/accounts/" + account + "/transactions/" + transactionId));
        endpoints.put("GET /idempotency-keys/{key}", r -> r.get("/idempotency-keys/" + newKey()));
        endpoints.put("GET unknown path", r -> r.get("/nowhere"));
        endpoints.put("DELETE /accounts", r -> r.delete("/accounts"));
        endpoints.put("GET /", r -> r.get("/"));
        return endpoints;
    }

    @Test
    void refusesEveryEndpointWithoutAValidKey() {
        String account = DEV.newAccount();
        String transactionId = DEV.credit(account, 100, 1).path("id");
        int refusals = 0;
        for (var credential : refusedCredentials().entrySet()) {
            for (var endpoint : everyEndpoint(account, transactionId).entrySet()) {
                assertUnauthorized(endpoint.getValue().apply(with(credential.getValue())), credential.getKey() + ", " + endpoint.getKey());
                refusals++;
            }
        }
        assertEquals(13 * 9, refusals);
        // nothing changed
        assertEquals(100, DEV.balance(account));
        assertEquals(1, DEV.entryCount(account));
    }

    @Test
    void theDetailSaysWhatIsWrongWithoutRepeatingTheKey() {
        Response missing = RestAssured.given().get("/accounts");
        assertTrue(missing.<String>path("detail").contains("Authorization: Bearer"), missing.asString());
        Response malformed = with(List.of("Bearer short")).get("/accounts/x");
        assertTrue(malformed.<String>path("detail").contains("24 to 512"), malformed.asString());
        Response twice = with(List.of("Bearer Bearer " + DEV.apiKey())).get("/accounts/x");
        assertEquals(401, twice.statusCode());
        assertTrue(twice.<String>path("detail").contains("names the scheme twice"), twice.asString());
        assertFalse(twice.asString().contains(DEV.apiKey()));
        Response unknown = with(List.of("Bearer " + UNKNOWN_KEY)).get("/accounts/x");
        assertEquals("The API key is not valid", unknown.path("detail"));
        assertFalse(unknown.asString().contains(UNKNOWN_KEY));
    }

    @Test
    void theSchemeNameIsCaseInsensitive() {
        String account = DEV.newAccount();
        for (String scheme : new String[]{"Bearer", "bearer", "BEARER", "bEaReR"}) {
            with(List.of(scheme + " " + DEV.apiKey())).get("/accounts/" + account).then().statusCode(200);
            with(List.of(scheme + " " + DEV.apiKey())).contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                    .body("{\"currency\":\"EUR\"}").post("/accounts").then().statusCode(201);
        }
    }

    @Test
    void authenticationPrecedesTheMediaTypeCheck() {
        for (List<String> credential : List.of(List.<String>of(), List.of("Bearer " + UNKNOWN_KEY))) {
            assertUnauthorized(with(credential).contentType(ContentType.TEXT).header("Idempotency-Key", newKey())
                    .body("{\"currency\":\"EUR\"}").post("/accounts"), "text/plain");
            assertUnauthorized(with(credential).header("Idempotency-Key", newKey()).body("{}".getBytes(StandardCharsets.UTF_8))
                    .post("/accounts"), "no Content-Type");
        }
        // the same request with a key is the 415 it would otherwise be
        DEV.given().contentType(ContentType.TEXT).header("Idempotency-Key", newKey()).body("{\"currency\":\"EUR\"}")
                .post("/accounts").then().statusCode(415);
    }

    @Test
    void authenticationPrecedesTheAcceptCheck() {
        String account = DEV.newAccount();
        for (List<String> credential : List.of(List.<String>of(), List.of("Bearer " + UNKNOWN_KEY))) {
            assertUnauthorized(with(credential).accept("text/plain").contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                    .body("{\"currency\":\"EUR\"}").post("/accounts"), "POST accepting text/plain");
            assertUnauthorized(with(credential).accept("text/plain").get("/accounts/" + account), "GET accepting text/plain");
        }
        DEV.given().accept("text/plain").get("/accounts/" + account).then().statusCode(406);
    }

    @Test
    void authenticationPrecedesTheIdempotencyKeyAndBodyChecks() {
        String account = DEV.newAccount();
        for (List<String> credential : List.of(List.<String>of(), List.of("Bearer " + UNKNOWN_KEY))) {
            assertUnauthorized(with(credential).contentType(ContentType.JSON).body("{\"currency\":\"EUR\"}").post("/accounts"),
                    "no Idempotency-Key");
            assertUnauthorized(with(credential).contentType(ContentType.JSON).header("Idempotency-Key", "bad key")
                    .body("{\"currency\":\"EUR\"}").post("/accounts"), "malformed Idempotency-Key");
            assertUnauthorized(with(credential).contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                    .body("{\"currency\":").post("/accounts"), "malformed JSON");
            assertUnauthorized(with(credential).contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                    .body("{\"ammount\":1}").post("/accounts/" + account + "/transactions"), "unknown member");
            assertUnauthorized(with(credential).queryParam("limit", 0).get("/accounts/" + account + "/transactions"), "bad limit");
            assertUnauthorized(with(credential).get("/accounts/not-a-uuid"), "not a UUID");
            String overTheLimit = "{\"currency\":\"" + "x".repeat(70_000) + "\"}";
            assertUnauthorized(with(credential).contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                    .body(overTheLimit).post("/accounts"), "body over 64 KiB");
            String overTheHttpLimit = "{\"currency\":\"" + "x".repeat(2_000_000) + "\"}";
            assertUnauthorized(with(credential).contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                    .body(overTheHttpLimit).post("/accounts"), "body over 1 MiB");
        }
        // with the key, each is the error it would otherwise be
        DEV.given().contentType(ContentType.JSON).body("{\"currency\":\"EUR\"}").post("/accounts")
                .then().statusCode(400).body("type", org.hamcrest.Matchers.equalTo("/problems/idempotency-key-missing"));
        DEV.given().get("/accounts/not-a-uuid").then().statusCode(404);
    }

    @Test
    void nothingIsReservedOrRecordedForARefusedRequest() throws Exception {
        String key = newKey();
        String body = "{\"currency\":\"NOK\"}";
        for (List<String> credential : refusedCredentials().values()) {
            assertUnauthorized(with(credential).contentType(ContentType.JSON).header("Idempotency-Key", key).body(body)
                    .post("/accounts"), "refused open");
        }
        for (ApiClient client : List.of(DEV, OTHER)) {
            IdempotentRequest scoped = IdempotentRequest.of(client.id(), new IdempotencyKey(key), "POST", "/accounts",
                    new ObjectMapper().readTree(body));
            assertEquals(0, redis.key().exists(RedisIdempotencyStore.key(scoped)) ? 1 : 0, "a refused request reserved the key for " + client);
        }
        Response first = DEV.openAccount(key, "NOK");
        assertEquals(201, first.statusCode(), first.asString());
        assertNull(first.header("Idempotent-Replayed"), "the refused requests recorded an answer");

        String account = DEV.newAccount();
        String txKey = newKey();
        for (List<String> credential : refusedCredentials().values()) {
            assertUnauthorized(with(credential).contentType(ContentType.JSON).header("Idempotency-Key", txKey)
                    .body(transaction("CREDIT", 5, 1)).post("/accounts/" + account + "/transactions"), "refused credit");
        }
        assertEquals(0, DEV.balance(account));
        Response credit = DEV.postTransaction(account, txKey, transaction("CREDIT", 5, 1));
        assertEquals(201, credit.statusCode(), credit.asString());
        assertNull(credit.header("Idempotent-Replayed"));
        assertEquals(5, DEV.balance(account));
    }

    @Test
    void bothKeysOfARotationActAsTheSameClient() {
        String key = newKey();
        Response opened = DEV.openAccount(key, "EUR");
        String account = opened.path("id");
        // the new key sees the same account and the same idempotency scope
        assertEquals(200, DEV_ROTATED.account(account).statusCode());
        Response replay = DEV_ROTATED.openAccount(key, "EUR");
        assertEquals("true", replay.header("Idempotent-Replayed"));
        assertEquals(opened.asString(), replay.asString());
        DEV_ROTATED.credit(account, 70, 1);
        DEV.credit(account, 30, 2);
        assertEquals(100, DEV.balance(account));
        assertEquals(100, DEV_ROTATED.balance(account));
        assertEquals(2, DEV_ROTATED.entryCount(account));
        // and it is not another client's
        assertEquals(404, OTHER.account(account).statusCode());
    }

    @Test
    void theOperatingSurfaceNeedsNoKeyAndIgnoresOne() {
        for (String path : List.of("/q/health", "/q/health/live", "/q/health/ready", "/q/openapi", "/q/metrics", "/q/swagger-ui/")) {
            RestAssured.given().get(path).then().statusCode(200);
            with(List.of("Bearer " + UNKNOWN_KEY)).get(path).then().statusCode(200);
            with(List.of("Basic Zm9vOmJhcg==")).get(path).then().statusCode(200);
        }
    }

    @Test
    void theOperatingSurfaceExposesNoBusinessData() {
        String reference = "ref-" + UUID.randomUUID();
        String account = DEV.newAccount();
        Response credit = DEV.postTransaction(account, newKey(),
                "{\"type\":\"CREDIT\",\"amount\":123456789,\"sequence\":1,\"reference\":\"" + reference + "\"}");
        String transactionId = credit.path("id");
        // ids in paths that are refused or match no endpoint, which metrics could record raw
        RestAssured.given().get("/accounts/" + account + "/nothing/" + UUID.randomUUID());
        RestAssured.given().get("/accounts/" + account);
        DEV.given().get("/accounts/" + account + "/nothing/" + UUID.randomUUID());
        with(List.of("Bearer " + UNKNOWN_KEY)).get("/accounts/" + account + "/transactions/" + transactionId);

        List<String> secrets = new ArrayList<>(List.of(account, transactionId, reference, "123456789", DEV.apiKey(),
                OTHER.apiKey(), UNKNOWN_KEY));
        for (String path : List.of("/q/health", "/q/health/ready", "/q/openapi", "/q/metrics")) {
            String body = RestAssured.given().get(path).asString();
            for (String secret : secrets) {
                assertFalse(body.contains(secret), path + " exposes " + secret);
            }
            // (the OpenAPI document's examples carry made-up ids; the real ones are among the secrets above)
            assertFalse(!path.equals("/q/openapi") && UUID_TEXT.matcher(body).find(), path + " exposes an id");
        }
    }
}
