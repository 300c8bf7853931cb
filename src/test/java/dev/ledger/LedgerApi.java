package dev.ledger;

import io.restassured.http.ContentType;
import io.restassured.response.Response;

import java.util.UUID;

import static io.restassured.RestAssured.given;

/** Requests of the public HTTP API, as a client sends them. */
public final class LedgerApi {
    private LedgerApi() {
    }

    public static String newKey() {
        return "test-" + UUID.randomUUID();
    }

    public static Response post(String path, String key, String json) {
        return given().contentType(ContentType.JSON).header("Idempotency-Key", key).body(json)
                .when().post(path).andReturn();
    }

    public static Response openAccount(String key, String currency) {
        return post("/accounts", key, "{\"currency\":\"" + currency + "\"}");
    }

    /** Opens a fresh EUR account and answers its id. */
    public static String newAccount() {
        Response response = openAccount(newKey(), "EUR");
        if (response.statusCode() != 201) {
            throw new AssertionError("open failed: " + response.statusCode() + " " + response.asString());
        }
        return response.path("id");
    }

    public static String transaction(String type, long amount, long sequence) {
        return "{\"type\":\"" + type + "\",\"amount\":" + amount + ",\"sequence\":" + sequence + "}";
    }

    public static Response postTransaction(String accountId, String key, String json) {
        return post("/accounts/" + accountId + "/transactions", key, json);
    }

    /** Credits an account with a fresh key; fails the test unless applied. */
    public static void credit(String accountId, long amount, long sequence) {
        Response response = postTransaction(accountId, newKey(), transaction("CREDIT", amount, sequence));
        if (response.statusCode() != 201) {
            throw new AssertionError("credit failed: " + response.statusCode() + " " + response.asString());
        }
    }

    public static Response account(String accountId) {
        return given().when().get("/accounts/" + accountId).andReturn();
    }

    public static long balance(String accountId) {
        return ((Number) account(accountId).path("balance")).longValue();
    }

    public static long lastSequence(String accountId) {
        return ((Number) account(accountId).path("lastSequence")).longValue();
    }

    public static int entryCount(String accountId) {
        return given().queryParam("limit", 500).when().get("/accounts/" + accountId + "/transactions")
                .then().statusCode(200).extract().path("items.size()");
    }
}
