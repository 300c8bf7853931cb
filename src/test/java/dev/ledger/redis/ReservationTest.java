package dev.ledger.redis;

import dev.ledger.idempotency.InFlightKey;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.Reservation;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The reserve and state scripts' replies, decoded. */
class ReservationTest {

    @Test
    void acquiredCarriesTheOwnerToken() {
        Reservation r = RedisIdempotencyStore.decode(List.of("ACQUIRED"), "owner-1");
        assertEquals("owner-1", assertInstanceOf(Reservation.Acquired.class, r).owner());
    }

    @Test
    void completedCarriesTheRecordedAnswer() {
        Reservation r = RedisIdempotencyStore.decode(List.of("COMPLETED", "201", "application/json", "/accounts/1", "{\"a\":1}",
                "1795428001123"), "o");
        RecordedResponse answer = assertInstanceOf(Reservation.Completed.class, r).response();
        assertEquals(201, answer.status());
        assertEquals("application/json", answer.contentType());
        assertEquals("/accounts/1", answer.location());
        assertArrayEquals("{\"a\":1}".getBytes(StandardCharsets.UTF_8), answer.body());
        assertEquals(Instant.ofEpochMilli(1795428001123L), answer.expiresAt());
    }

    @Test
    void completedWithoutLocationOrExpiryHasNone() {
        Reservation r = RedisIdempotencyStore.decode(List.of("COMPLETED", "409", "application/problem+json", "", "{}", ""), "o");
        assertNull(assertInstanceOf(Reservation.Completed.class, r).response().location());
        assertNull(((Reservation.Completed) r).response().expiresAt(), "a key the previous version completed kept no expiry");
    }

    @Test
    void aKeyInFlightSaysItsPathReservationAndLeasesEnd() {
        InFlightKey held = RedisIdempotencyStore.held(List.of("PROCESSING", "12000", "/accounts", "1795428001000"), 1_795_428_003_000L);
        assertEquals(new InFlightKey("/accounts", Instant.ofEpochMilli(1_795_428_001_000L), Instant.ofEpochMilli(1_795_428_015_000L)), held);
        InFlightKey older = RedisIdempotencyStore.held(List.of("PROCESSING", "-1", "", ""), 5);
        assertEquals(new InFlightKey(null, null, Instant.ofEpochMilli(5)), older, "a reservation that kept neither");
        assertNull(RedisIdempotencyStore.held(List.of("COMPLETED", "86400000", "", ""), 5), "a completed key is not in flight");
    }

    @Test
    void inProgressRoundsTheLeaseUpToWholeSecondsAtLeastOne() {
        assertEquals(30, ((Reservation.InProgress) RedisIdempotencyStore.decode(List.of("IN_PROGRESS", "29001"), "o")).retryAfterSeconds());
        assertEquals(1, ((Reservation.InProgress) RedisIdempotencyStore.decode(List.of("IN_PROGRESS", "1"), "o")).retryAfterSeconds());
        assertEquals(1, ((Reservation.InProgress) RedisIdempotencyStore.decode(List.of("IN_PROGRESS", "-1"), "o")).retryAfterSeconds());
        assertEquals(2, ((Reservation.InProgress) RedisIdempotencyStore.decode(List.of("IN_PROGRESS", "2000"), "o")).retryAfterSeconds());
    }

    @Test
    void mismatch() {
        assertInstanceOf(Reservation.Mismatch.class, RedisIdempotencyStore.decode(List.of("MISMATCH"), "o"));
    }

    @Test
    void rejectsUnknownOrShortReplies() {
        assertThrows(IllegalArgumentException.class, () -> RedisIdempotencyStore.decode(List.of("WHAT"), "o"));
        assertThrows(IllegalArgumentException.class, () -> RedisIdempotencyStore.decode(List.of(), "o"));
        assertThrows(IllegalArgumentException.class, () -> RedisIdempotencyStore.decode(Arrays.asList("COMPLETED", "201"), "o"));
        assertThrows(IllegalArgumentException.class, () -> RedisIdempotencyStore.decode(
                List.of("COMPLETED", "201", "application/json", "", "{}"), "o"));
    }
}
