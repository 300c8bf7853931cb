package dev.ledger.account;

import dev.ledger.testing.LedgerApi;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static dev.ledger.testing.LedgerApi.given;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.matchesPattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
class AccountResourceTest {

    @Test
    void opensAnAccountWithZeroBalance() {
        Response response = openAccount(newKey(), "EUR");
        assertEquals(201, response.statusCode());
        assertTrue(response.contentType().startsWith("application/json"));
        String id = response.path("id");
        assertEquals("/accounts/" + id, response.header("Location"));
        assertEquals("EUR", response.path("currency"));
        assertEquals(0, (int) response.path("balance"));
        assertEquals(0, (int) response.path("lastSequence"));
        Instant.parse(response.path("createdAt"));
        assertNull(response.header("Idempotent-Replayed"));

        given().when().get("/accounts/" + id).then().statusCode(200)
                .body("id", equalTo(id)).body("currency", equalTo("EUR")).body("balance", equalTo(0))
                .body("createdAt", equalTo(response.path("createdAt")));
    }

    @Test
    void aRetriedOpenReturnsTheSameAccountByteForByte() {
        String key = newKey();
        Response first = openAccount(key, "USD");
        Response retry = LedgerApi.post("/accounts", key, "{ \"currency\" : \"USD\" }");
        assertEquals(201, retry.statusCode());
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(first.asString(), retry.asString());
        assertEquals(first.header("Location"), retry.header("Location"));
        assertEquals(first.contentType(), retry.contentType());
    }

    @Test
    void aReplayedOpenStillShowsTheAccountAsOpenedAfterItMoved() {
        String key = newKey();
        Response first = openAccount(key, "EUR");
        String id = first.path("id");
        LedgerApi.credit(id, 500, 1);
        Response retry = openAccount(key, "EUR");
        assertEquals(first.asString(), retry.asString());
        assertEquals(500, LedgerApi.balance(id));
    }

    @Test
    void differentKeysOpenDifferentAccounts() {
        assertNotEquals(openAccount(newKey(), "EUR").<String>path("id"), openAccount(newKey(), "EUR").<String>path("id"));
    }

    @Test
    void rejectsKeyReusedWithAnotherBody() {
        String key = newKey();
        openAccount(key, "EUR");
        Response reuse = openAccount(key, "GBP");
        assertEquals(422, reuse.statusCode());
        assertEquals("application/problem+json", reuse.contentType());
        assertEquals("/problems/idempotency-key-reused", reuse.path("type"));
    }

    @Test
    void rejectsCurrenciesThatAreNotThreeUpperCaseLetters() {
        for (String bad : new String[]{"eur", "EURO", "EU", "E1R", "", "ÉUR"}) {
            Response response = openAccount(newKey(), bad);
            assertEquals(400, response.statusCode(), bad);
            assertEquals("/problems/invalid-request", response.path("type"));
        }
        assertEquals(400, LedgerApi.post("/accounts", newKey(), "{\"currency\":1}").statusCode());
        assertEquals(400, LedgerApi.post("/accounts", newKey(), "{}").statusCode());
    }

    @Test
    void unknownOrMalformedIdsAreNotFound() {
        for (String id : new String[]{"00000000-0000-0000-0000-000000000000", "not-a-uuid", "1-1-1-1-1", "%00"}) {
            given().when().get("/accounts/" + id).then().statusCode(404)
                    .contentType("application/problem+json")
                    .body("type", equalTo("/problems/account-not-found"))
                    .body("status", equalTo(404))
                    .body("title", matchesPattern(".+"));
        }
    }
}
