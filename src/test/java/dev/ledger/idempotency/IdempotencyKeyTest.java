package dev.ledger.idempotency;

import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IdempotencyKeyTest {

    private static String parse(String header) {
        return IdempotencyKey.parse(List.of(header)).value();
    }

    private static ProblemType rejection(List<String> headers) {
        return assertThrows(ProblemException.class, () -> IdempotencyKey.parse(headers)).problem().type();
    }

    @Test
    void acceptsBareVisibleAscii() {
        assertEquals("order-8812_!#$%&'()*+,./:;<=>?@[\\]^`{|}~", parse("order-8812_!#$%&'()*+,./:;<=>?@[\\]^`{|}~"));
    }

    @Test
    void quotedFormIsTheSameKeyWithoutQuotes() {
        assertEquals("abc", parse("\"abc\""));
        assertEquals(parse("abc"), parse("\"abc\""));
    }

    @Test
    void decodesStructuredFieldEscapes() {
        assertEquals("a\"b\\c", parse("\"a\\\"b\\\\c\""));
    }

    @Test
    void lengthLimitAppliesToTheDecodedKey() {
        String max = "k".repeat(255);
        assertEquals(max, parse(max));
        assertEquals(max, parse("\"" + max + "\""));
        assertEquals("\"".repeat(255), parse("\"" + "\\\"".repeat(255) + "\""));
        assertEquals(ProblemType.IDEMPOTENCY_KEY_INVALID, rejection(List.of("k".repeat(256))));
        assertEquals(ProblemType.IDEMPOTENCY_KEY_INVALID, rejection(List.of("\"" + "k".repeat(256) + "\"")));
    }

    /** A lookup's path holds the bare key: its quotes are the key's own characters, which a bare key cannot have. */
    @Test
    void aKeyInAPathIsBareAndKeepsItsQuotes() {
        assertEquals("order-8812/?#%", IdempotencyKey.inPath("order-8812/?#%").value());
        for (String malformed : new String[]{"\"abc\"", "", "a b", "caf\u00e9", "k".repeat(256)}) {
            ProblemException refused = assertThrows(ProblemException.class, () -> IdempotencyKey.inPath(malformed), malformed);
            assertEquals(ProblemType.IDEMPOTENCY_KEY_INVALID, refused.problem().type(), malformed);
        }
        String detail = assertThrows(ProblemException.class, () -> IdempotencyKey.inPath("\"abc\"")).problem().getDetail();
        assertTrue(detail.contains("without the quotes"), detail);
    }

    @Test
    void missingHeaderIsItsOwnProblem() {
        assertEquals(ProblemType.IDEMPOTENCY_KEY_MISSING, rejection(List.of()));
        assertEquals(ProblemType.IDEMPOTENCY_KEY_MISSING, rejection(null));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "\"\"", "a b", "a\"b", "caf\u00e9", "tab\there", "\"unterminated", "\"bad\\escape\"",
            "\"ends-with-backslash\\\"", "\"inner\"quote\"", "\u007f"})
    void rejectsMalformedKeys(String header) {
        assertEquals(ProblemType.IDEMPOTENCY_KEY_INVALID, rejection(List.of(header)));
    }

    @Test
    void rejectsARepeatedHeader() {
        assertEquals(ProblemType.IDEMPOTENCY_KEY_INVALID, rejection(List.of("a", "b")));
    }
}
