package dev.ledger.testing;

import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * One client of the API with one of its API keys: requests as that client sends them. The keys are
 * the test profile's ({@code %test.ledger.api-keys} in application.properties).
 */
public final class ApiClient {
    /** The documented development key, also configured in dev mode. */
    public static final ApiClient DEV = new ApiClient("dev", "dev-ledger-key-0123456789abcdef");
    /** A second key of the same client, as during a rotation. */
    public static final ApiClient DEV_ROTATED = new ApiClient("dev", "dev-ledger-key-rotated-0123456789");
    /** Another tenant. */
    public static final ApiClient OTHER = new ApiClient("other", "other-ledger-key-0123456789abcdef");

    private final String id;
    private final String apiKey;

    public ApiClient(String id, String apiKey) {
        this.id = id;
        this.apiKey = apiKey;
    }

    /** The client id the service knows this client by (the principal). */
    public String id() {
        return id;
    }

    public String apiKey() {
        return apiKey;
    }

    public String authorization() {
        return "Bearer " + apiKey;
    }

    /** A RestAssured request carrying this client's key. */
    public RequestSpecification given() {
        return RestAssured.given().header("Authorization", authorization());
    }

    public static String newKey() {
        return "test-" + UUID.randomUUID();
    }

    public Response post(String path, String key, String json) {
        return given().contentType(ContentType.JSON).header("Idempotency-Key", key).body(json)
                .when().post(path).andReturn();
    }

    public Response openAccount(String key, String currency) {
        return post("/accounts", key, "{\"currency\":\"" + currency + "\"}");
    }

    /** Opens a fresh EUR account and answers its id. */
    public String newAccount() {
        Response response = openAccount(newKey(), "EUR");
        if (response.statusCode() != 201) {
            throw new AssertionError("open failed: " + response.statusCode() + " " + response.asString());
        }
        return response.path("id");
    }

    public Response postTransaction(String accountId, String key, String json) {
        return post("/accounts/" + accountId + "/transactions", key, json);
    }

    /** Credits an account with a fresh key; fails the test unless applied. Answers the transaction. */
    public Response credit(String accountId, long amount, long sequence) {
        Response response = postTransaction(accountId, newKey(), LedgerApi.transaction("CREDIT", amount, sequence));
        if (response.statusCode() != 201) {
            throw new AssertionError("credit failed: " + response.statusCode() + " " + response.asString());
        }
        return response;
    }

    /** {@code POST /transfers} with a fresh key. */
    public Response transfer(String json) {
        return post("/transfers", newKey(), json);
    }

    /** {@code POST /transfers/{id}/<action>} ({@code post}, {@code void}, {@code reversals}) with a fresh key. */
    public Response settle(String transferId, String action, String json) {
        return post("/transfers/" + transferId + "/" + action, newKey(), json);
    }

    public Response getTransfer(String transferId) {
        return given().when().get("/transfers/" + transferId).andReturn();
    }

    /** {@code GET /idempotency-keys/{key}}, the key percent-encoded (every character but letters, digits and {@code -._~}). */
    public Response lookup(String key) {
        return lookupPath(encode(key));
    }

    /** {@code GET /idempotency-keys/<segment>}, the segment sent as given. */
    public Response lookupPath(String segment) {
        return given().urlEncodingEnabled(false).when().get("/idempotency-keys/" + segment).andReturn();
    }

    private static String encode(String key) {
        StringBuilder encoded = new StringBuilder();
        for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if (Character.isLetterOrDigit(c) && c < 0x80 || "-._~".indexOf(c) >= 0) {
                encoded.append(c);
            } else {
                encoded.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return encoded.toString();
    }

    public Response account(String accountId) {
        return given().when().get("/accounts/" + accountId).andReturn();
    }

    public Response transactions(String accountId) {
        return given().queryParam("limit", 500).when().get("/accounts/" + accountId + "/transactions").andReturn();
    }

    public Response transaction(String accountId, String transactionId) {
        return given().when().get("/accounts/" + accountId + "/transactions/" + transactionId).andReturn();
    }

    public long balance(String accountId) {
        return ((Number) account(accountId).path("balance")).longValue();
    }

    public long lastSequence(String accountId) {
        return ((Number) account(accountId).path("lastSequence")).longValue();
    }

    public int entryCount(String accountId) {
        Response page = transactions(accountId);
        if (page.statusCode() != 200) {
            throw new AssertionError("listing failed: " + page.statusCode() + " " + page.asString());
        }
        return page.path("items.size()");
    }

    @Override
    public String toString() {
        return id;
    }
}
