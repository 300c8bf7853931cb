package dev.ledger.security;

import io.quarkus.runtime.configuration.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Parsing of {@code ledger.api-keys}: what starts, and what stops the application with which message. */
class ApiKeysTest {
    private static final String ACME_KEY = "acme-key-0123456789abcdef0123";
    private static final String ACME_NEXT = "acme-key-next-0123456789abcdef";
    private static final String GLOBEX_KEY = "globex-key-0123456789abcdef012";

    static String hash(String key) {
        return HexFormat.of().formatHex(ApiKeys.sha256(key));
    }

    @Test
    void hashesAreTheSha256HexThatSha256sumPrints() {
        // printf %s 'dev-ledger-key-0123456789abcdef' | sha256sum
        assertEquals("80d6aa310c44ab12682d980a3cd7c1f042432c883534d0a3eea3977f6bf277f3", hash("dev-ledger-key-0123456789abcdef"));
    }

    @Test
    void readsSeveralKeysPerClientAndToleratesSpacesAroundEntries() {
        List<ApiKeys.Entry> entries = ApiKeys.parse("acme:" + hash(ACME_KEY) + " , acme:" + hash(ACME_NEXT) + ",globex.eu_1-x:" + hash(GLOBEX_KEY));
        assertEquals(List.of("acme", "acme", "globex.eu_1-x"), entries.stream().map(ApiKeys.Entry::client).toList());
        assertArrayEquals(ApiKeys.sha256(ACME_NEXT), entries.get(1).digest());
    }

    @Test
    void refusesToStartWithoutKeys() {
        for (String blank : new String[]{"", " ", "\t"}) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> ApiKeys.parse(blank));
            assertTrue(e.getMessage().contains("ledger.api-keys"), e.getMessage());
            assertTrue(e.getMessage().contains("LEDGER_API_KEYS"), e.getMessage());
            assertTrue(e.getMessage().contains("ledger.auth.enabled=false"), e.getMessage());
        }
    }

    @Test
    void namesTheMalformedEntryByPositionWithoutRepeatingIt() {
        String good = "acme:" + hash(ACME_KEY);
        String upperCase = hash(GLOBEX_KEY).toUpperCase();
        String[][] cases = {
                {good + "," + hash(GLOBEX_KEY), "2"},                         // no client id
                {good + ",globex:" + upperCase, "2"},                          // not lower-case
                {good + ",globex:" + hash(GLOBEX_KEY) + "0", "2"},             // 65 hex digits
                {good + ",globex:" + hash(GLOBEX_KEY).substring(1), "2"},      // 63 hex digits
                {good + ",glo bex:" + hash(GLOBEX_KEY), "2"},                  // space in the client id
                {good + ",:" + hash(GLOBEX_KEY), "2"},                         // empty client id
                {good + "," + "c".repeat(65) + ":" + hash(GLOBEX_KEY), "2"},  // client id too long
                {good + ",globex:" + hash(GLOBEX_KEY) + "," + ACME_KEY, "3"},  // a raw key pasted by mistake
                {good + ",,globex:" + hash(GLOBEX_KEY), "2"},                  // empty entry
                {good + ",", "2"},                                             // trailing comma
                {"globex:" + hash(GLOBEX_KEY) + ":" + hash(GLOBEX_KEY), "1"},  // two hashes
        };
        for (String[] c : cases) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> ApiKeys.parse(c[0]), c[0]);
            String message = e.getMessage();
            assertTrue(message.startsWith("ledger.api-keys entr"), message);
            assertTrue(message.matches(".*\\b" + c[1] + "\\b.*"), "position " + c[1] + " not named: " + message);
            for (String secret : new String[]{hash(ACME_KEY), hash(GLOBEX_KEY), upperCase, hash(GLOBEX_KEY).substring(1),
                    ACME_KEY, "acme", "globex"}) {
                assertFalse(message.contains(secret), "the message repeats part of an entry: " + message);
            }
        }
    }

    @Test
    void findsTheClientOfAKeyAndNoneForAnUnknownOne() {
        ApiKeys keys = new ApiKeys(ApiKeys.parse("acme:" + hash(ACME_KEY) + ",globex:" + hash(GLOBEX_KEY) + ",acme:" + hash(ACME_NEXT)));
        assertEquals("acme", keys.clientFor(ACME_KEY).orElseThrow());
        assertEquals("acme", keys.clientFor(ACME_NEXT).orElseThrow());
        assertEquals("globex", keys.clientFor(GLOBEX_KEY).orElseThrow());
        assertTrue(keys.clientFor("unknown-key-0123456789abcdef").isEmpty());
        assertTrue(keys.clientFor(hash(ACME_KEY)).isEmpty(), "the hash itself is not a key");
    }

    @Test
    void refusesOneKeyForTwoEntries() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                () -> ApiKeys.parse("acme:" + hash(ACME_KEY) + ",globex:" + hash(GLOBEX_KEY) + ",globex:" + hash(ACME_KEY)));
        assertTrue(e.getMessage().contains("entries 1 and 3"), e.getMessage());
        assertFalse(e.getMessage().contains(hash(ACME_KEY)));
    }
}
