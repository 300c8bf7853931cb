package dev.ledger.idempotency;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OwnerTokensTest {

    @Test
    void ownerTokensAreNeverRepeated() {
        OwnerTokens tokens = new OwnerTokens();
        Set<String> owners = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            assertTrue(owners.add(tokens.next()));
        }
        // the process's random part: another process's tokens differ even where the counters meet
        String first = owners.iterator().next();
        assertTrue(first.matches("[0-9a-f-]{36}:[0-9a-f]+"), first);
        assertNotEquals(new OwnerTokens().next(), new OwnerTokens().next());
    }
}
