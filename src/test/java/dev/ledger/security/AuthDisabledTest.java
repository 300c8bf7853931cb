package dev.ledger.security;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.UUID;

import static dev.ledger.testing.ApiClient.DEV;
import static dev.ledger.testing.ApiClient.newKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ledger.auth.enabled=false}: no key is asked for, none is configured, and every request is the client {@code default}. */
@QuarkusTest
@TestProfile(AuthDisabledTest.AuthOff.class)
class AuthDisabledTest {

    public static class AuthOff implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("ledger.auth.enabled", "false", "ledger.api-keys", "");
        }
    }

    @Inject
    DataSource dataSource;

    @Test
    void everyRequestActsAsTheDefaultClient() throws Exception {
        Response opened = RestAssured.given().contentType(ContentType.JSON).header("Idempotency-Key", newKey())
                .body("{\"currency\":\"EUR\"}").post("/accounts");
        assertEquals(201, opened.statusCode(), opened.asString());
        assertNull(opened.header("WWW-Authenticate"));
        String account = opened.path("id");
        RestAssured.given().get("/accounts/" + account).then().statusCode(200);
        // a key, even an unknown one, changes nothing: it is not checked
        DEV.given().get("/accounts/" + account).then().statusCode(200);
        RestAssured.given().header("Authorization", "Bearer nonsense").get("/accounts/" + account).then().statusCode(200);
        try (Connection db = dataSource.getConnection();
             PreparedStatement owner = db.prepareStatement("SELECT owner FROM accounts WHERE id = ?")) {
            owner.setObject(1, UUID.fromString(account));
            try (ResultSet row = owner.executeQuery()) {
                assertTrue(row.next());
                assertEquals(ApiKeys.DEFAULT_CLIENT, row.getString(1));
            }
        }
    }
}
