package dev.ledger.security;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which {@code Authorization} values carry a well-formed API key. */
class ApiKeyAuthenticationMechanismTest {
    private static final String KEY = "dev-ledger-key-0123456789abcdef";

    @Test
    void readsTheBearerSchemeInAnyCase() {
        for (String scheme : new String[]{"Bearer", "bearer", "BEARER", "bEaReR"}) {
            assertEquals(Optional.of(KEY), ApiKeyAuthenticationMechanism.bearerKey(scheme + " " + KEY), scheme);
        }
        assertEquals(Optional.of(KEY), ApiKeyAuthenticationMechanism.bearerKey("Bearer   " + KEY), "1*SP before the key");
    }

    @Test
    void acceptsKeysOf24To512VisibleAsciiCharacters() {
        String visible = "!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~";
        assertEquals(Optional.of(visible), ApiKeyAuthenticationMechanism.bearerKey("Bearer " + visible));
        assertEquals(24, ApiKeyAuthenticationMechanism.bearerKey("Bearer " + "k".repeat(24)).orElseThrow().length());
        assertEquals(512, ApiKeyAuthenticationMechanism.bearerKey("Bearer " + "k".repeat(512)).orElseThrow().length());
    }

    @Test
    void tellsTheSchemeSentTwice() {
        for (String header : new String[]{"Bearer Bearer " + KEY, "bearer  BEARER " + KEY, " Bearer Bearer"}) {
            assertEquals(Optional.empty(), ApiKeyAuthenticationMechanism.bearerKey(header), header);
            assertTrue(ApiKeyAuthenticationMechanism.schemeTwice(header), header);
        }
        assertFalse(ApiKeyAuthenticationMechanism.schemeTwice("Bearer " + KEY));
        assertFalse(ApiKeyAuthenticationMechanism.schemeTwice("Bearer Bearerish-key-0123456789abcdef"));
    }

    @Test
    void everythingElseIsMalformed() {
        String[] malformed = {
                "", "Bearer", "Bearer ", "Bearer" + KEY, "Basic ZGV2OmRldg==", "Token " + KEY, KEY,
                "Bearer " + "k".repeat(23), "Bearer " + "k".repeat(513),
                "Bearer dev-ledger-key 0123456789abcdef", "Bearer dev-ledger-key\t0123456789abcdef",
                "Bearer\t" + KEY, "Bearer dev-ledger-key-0123456789abcdé", "Bearer dev-ledger-key-0123456789abcd\u0000",
                "Bearer " + KEY + " extra", "Bearers " + KEY, "Bear " + KEY};
        for (String header : malformed) {
            assertEquals(Optional.empty(), ApiKeyAuthenticationMechanism.bearerKey(header), header);
        }
    }
}
