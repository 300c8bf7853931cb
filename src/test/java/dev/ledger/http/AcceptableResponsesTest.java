package dev.ledger.http;

import dev.ledger.testing.ApiClient;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URL;
import java.util.List;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.given;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request whose {@code Accept} does not admit {@code application/json} is a 406 problem on every
 * endpoint, decided before anything is reserved, applied or read.
 */
@QuarkusTest
class AcceptableResponsesTest {
    @TestHTTPResource("/")
    URL base;

    @ParameterizedTest
    @ValueSource(strings = {"*/*", "application/*", "application/json", "APPLICATION/JSON", "application/json; charset=utf-8",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/plain, application/json;q=0.001",
            "*/*;q=0, application/json", "application/*;q=0.5", "application/json;q=1.000", "application/json ; Q=0.5",
            "application/json;q=0.5;ext=1", "application/problem+json, application/json"})
    void admitsJson(String accept) {
        assertTrue(AcceptableResponses.admitsJson(List.of(accept)), accept);
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain", "text/*", "application/xml", "application/problem+json", "application/*+json",
            "application/json;q=0", "application/json;q=0.000", "*/*;q=0", "application/*;q=0, */*", "application/json;q=0, */*",
            "application/json;q=abc", "application/json;q=1.5", ";;;", "json", "*/json", "application/json/x"})
    void refusesWhatDoesNotAdmitJson(String accept) {
        assertFalse(AcceptableResponses.admitsJson(List.of(accept)), accept);
    }

    @Test
    void noAcceptAdmitsAnythingAndSeveralFieldLinesAreOneList() {
        assertTrue(AcceptableResponses.admitsJson(List.of()));
        assertTrue(AcceptableResponses.admitsJson(List.of(" ")));
        assertTrue(AcceptableResponses.admitsJson(List.of("text/plain", "application/json")));
        assertFalse(AcceptableResponses.admitsJson(List.of("*/*", "application/json;q=0")));
    }

    @Test
    void refusesAPostBeforeAnythingIsReservedOrApplied() {
        String account = newAccount();
        String key = newKey();
        Response refused = given().accept("text/plain").contentType(ContentType.JSON).header("Idempotency-Key", key)
                .body(transaction("CREDIT", 5, 1)).when().post("/accounts/" + account + "/transactions").andReturn();
        assertNotAcceptable(refused);
        assertEquals(0, balance(account));
        // the key is free: the same request accepting JSON executes afresh
        Response applied = postTransaction(account, key, transaction("CREDIT", 5, 1));
        assertEquals(201, applied.statusCode(), applied.asString());
        assertNull(applied.header("Idempotent-Replayed"));
        assertEquals(5, balance(account));

        String openKey = newKey();
        assertNotAcceptable(given().accept("application/json;q=0").contentType(ContentType.JSON).header("Idempotency-Key", openKey)
                .body("{\"currency\":\"EUR\"}").when().post("/accounts").andReturn());
        Response opened = openAccount(openKey, "EUR");
        assertEquals(201, opened.statusCode(), opened.asString());
        assertNull(opened.header("Idempotent-Replayed"), "the refused open was recorded");
    }

    @Test
    void refusesEveryReadWhoseAcceptExcludesJson() {
        String account = newAccount();
        String transaction = ApiClient.DEV.credit(account, 5, 1).path("id");
        for (String path : List.of("/accounts/" + account, "/accounts/" + account + "/transactions",
                "/accounts/" + account + "/transactions/" + transaction, "/accounts/not-a-uuid")) {
            assertNotAcceptable(given().accept("text/html").when().get(path).andReturn());
            // Quarkus REST's own negotiation took q=0 for acceptable
            assertNotAcceptable(given().accept("application/json;q=0").when().get(path).andReturn());
        }
        given().accept("application/*").when().get("/accounts/" + account).then().statusCode(200);
        given().header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8").when().get("/accounts/" + account).then().statusCode(200);
    }

    @Test
    void theRefusalPrecedesTheMediaTypeKeyAndBodyChecks() {
        String account = newAccount();
        assertNotAcceptable(given().accept("text/plain").contentType(ContentType.TEXT).header("Idempotency-Key", newKey())
                .body("{}").when().post("/accounts").andReturn());
        assertNotAcceptable(given().accept("text/plain").contentType(ContentType.JSON)
                .body("{}").when().post("/accounts").andReturn());
        assertNotAcceptable(given().accept("text/plain").contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                .body("{\"type\":").when().post("/accounts/" + account + "/transactions").andReturn());
        assertNotAcceptable(given().accept("text/plain").queryParam("limit", 0).when().get("/accounts/" + account + "/transactions").andReturn());
    }

    @Test
    void theConnectionServesTheNextRequestAfterARefusedBody() throws Exception {
        // a body of 1 MiB, in many reads: unread, it would stall the connection
        String account = newAccount();
        String body = "{\"type\":\"CREDIT\",\"amount\":5,\"sequence\":1,\"reference\":\"" + "x".repeat(1 << 20) + "\"}";
        try (RawHttp http = new RawHttp(base)) {
            http.send("POST /accounts/" + account + "/transactions HTTP/1.1\r\nHost: localhost\r\nAuthorization: "
                    + ApiClient.DEV.authorization() + "\r\nIdempotency-Key: " + newKey() + "\r\nAccept: text/plain"
                    + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
            http.read().assertProblem(406, "not-acceptable");
            http.send("GET /accounts/" + account + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: "
                    + ApiClient.DEV.authorization() + "\r\n\r\n");
            assertEquals(200, http.read().status());
        }
    }

    @Test
    void theOperatingSurfaceKeepsItsOwnMediaTypes() {
        RestAssured.given().accept("text/plain").when().get("/q/metrics").then().statusCode(200);
        RestAssured.given().accept("text/html").when().get("/q/swagger-ui/").then().statusCode(200);
    }

    private static void assertNotAcceptable(Response response) {
        assertEquals(406, response.statusCode(), response.asString());
        assertTrue(response.contentType().startsWith("application/problem+json"), response.contentType());
        assertEquals("/problems/not-acceptable", response.path("type"));
        assertEquals(406, (int) response.path("status"));
    }
}
