package dev.ledger.input;

import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UuidsTest {

    @Test
    void readsTheCanonicalFormInEitherCase() {
        UUID id = UUID.fromString("0f8fad5b-d9cb-469f-a165-70867728950e");
        assertEquals(id, Uuids.parse("0f8fad5b-d9cb-469f-a165-70867728950e").orElseThrow());
        assertEquals(id, Uuids.parse("0F8FAD5B-D9CB-469F-A165-70867728950E").orElseThrow());
    }

    @Test
    void namesNothingForAnythingElse() {
        for (String raw : new String[] {null, "", "1-1-1-1-1", "not-a-uuid",
                "0f8fad5b-d9cb-469f-a165-70867728950", "0f8fad5b-d9cb-469f-a165-70867728950e0",
                "0f8fad5bd-9cb-469f-a165-70867728950e", "0f8fad5b-d9cb-469f-a165_70867728950e",
                "0f8fad5g-d9cb-469f-a165-70867728950e", "+f8fad5b-d9cb-469f-a165-70867728950e",
                "0f8fad5b-d9cb-469f-a165-7086772895\u0661e", "0f8fad5b-d9cb-469f-a165-7086772895\uff10e",
                "{f8fad5b-d9cb-469f-a165-70867728950e"}) {
            assertTrue(Uuids.parse(raw).isEmpty(), () -> "parsed " + raw);
        }
    }
}
