package dev.ledger.security;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.Map;

import static dev.ledger.testing.ApiClient.DEV;
import static dev.ledger.testing.ApiClient.DEV_ROTATED;
import static dev.ledger.testing.ApiClient.OTHER;
import static dev.ledger.testing.ApiClient.newKey;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The end of a rotation: the old key's entry is removed from the setting, and the service restarted with it. */
@QuarkusTest
@TestProfile(RevokedKeyTest.OldDevKeyRemoved.class)
class RevokedKeyTest {

    public static class OldDevKeyRemoved implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("ledger.api-keys", "dev:" + sha256Hex(DEV_ROTATED.apiKey()) + ",other:" + sha256Hex(OTHER.apiKey()));
        }
    }

    static String sha256Hex(String key) {
        return HexFormat.of().formatHex(ApiKeys.sha256(key));
    }

    @Test
    void aRemovedKeyIsRefusedWhileItsSuccessorWorks() {
        String account = DEV_ROTATED.newAccount();
        Response old = DEV.account(account);
        AuthenticationTest.assertUnauthorized(old, "removed key");
        assertEquals("The API key is not valid", old.path("detail"));
        AuthenticationTest.assertUnauthorized(DEV.openAccount(newKey(), "EUR"), "removed key, POST");
        assertEquals(200, DEV_ROTATED.account(account).statusCode());
        assertEquals(200, OTHER.account(OTHER.newAccount()).statusCode());
    }
}
