package dev.ledger.http;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Reading RFC 7240's {@code wait} preference. */
class PreferWaitTest {
    @Test
    void readsTheWaitPreferenceWhereverItStands() {
        assertEquals(Duration.ofSeconds(5), PreferWait.of(List.of("wait=5")));
        assertEquals(Duration.ofSeconds(5), PreferWait.of(List.of("respond-async, wait=5")));
        assertEquals(Duration.ofSeconds(5), PreferWait.of(List.of("respond-async", "WAIT = 5")));
        assertEquals(Duration.ofSeconds(7), PreferWait.of(List.of("wait=\"7\"; foo=bar")));
        assertEquals(Duration.ofSeconds(3), PreferWait.of(List.of("wait=3, wait=9")));
    }

    @Test
    void readsAWaitTooLargeToRepresentAsTwoToTheThirtyFirstSeconds() {
        Duration max = Duration.ofSeconds(1L << 31);
        assertEquals(Duration.ofSeconds(999_999_999), PreferWait.of(List.of("wait=999999999")));
        assertEquals(max, PreferWait.of(List.of("wait=99999999999")));
        assertEquals(max, PreferWait.of(List.of("wait=99999999999999999999")));
    }

    @Test
    void ignoresWhatIsNotAWaitInSeconds() {
        for (String header : new String[]{"", "respond-async", "wait", "wait=", "wait=-1", "wait=1.5", "wait=abc",
                "waiting=5"}) {
            assertEquals(Duration.ZERO, PreferWait.of(List.of(header)), header);
        }
        assertEquals(Duration.ZERO, PreferWait.of(List.of()));
    }
}
