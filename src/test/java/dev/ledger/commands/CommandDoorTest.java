package dev.ledger.commands;

import dev.ledger.commands.CommandDoor.Settlement;
import dev.ledger.idempotency.Outcome;
import dev.ledger.idempotency.RecordedResponse;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The door's one table: what happens to a command for each way its run through the engine ends. */
class CommandDoorTest {
    private static final RecordedResponse ANSWER = new RecordedResponse(201, "application/json", "/x", new byte[0]);
    private static final RecordedResponse PROBLEM = new RecordedResponse(409, "application/problem+json", null, new byte[0]);
    private static final int MAX = 5;

    @Test
    void aRecordedAnswerOrAReusedKeyIsPublished() {
        for (Outcome.Source source : Outcome.Source.values()) {
            assertEquals(Settlement.PUBLISH, Settlement.of(new Outcome.Recorded(ANSWER, source, null, false), null, 1, MAX));
        }
        assertEquals(Settlement.PUBLISH, Settlement.of(new Outcome.Recorded(ANSWER, Outcome.Source.EXECUTED, Duration.ofSeconds(1), true),
                null, MAX, MAX), "even at its last attempt");
        assertEquals(Settlement.PUBLISH, Settlement.of(new Outcome.KeyReused(PROBLEM), null, 1, MAX));
    }

    @Test
    void anUnavailableDependencyOrAnOriginalInFlightIsTriedAgainAndNeverDeadLettered() {
        for (int attempt = 1; attempt <= MAX * 3; attempt++) {
            assertEquals(Settlement.RETRY, Settlement.of(new Outcome.Unavailable(PROBLEM, 1, true), null, attempt, MAX));
            assertEquals(Settlement.RETRY, Settlement.of(new Outcome.InFlight(PROBLEM, 1, true), null, attempt, MAX));
        }
    }

    @Test
    void aBugIsTriedAgainUntilItsLastAttemptThenDeadLettered() {
        RuntimeException bug = new IllegalStateException("a bug");
        for (int attempt = 1; attempt < MAX; attempt++) {
            assertEquals(Settlement.RETRY, Settlement.of(null, bug, attempt, MAX));
        }
        assertEquals(Settlement.DEAD_LETTER, Settlement.of(null, bug, MAX, MAX));
        assertEquals(Settlement.DEAD_LETTER, Settlement.of(null, bug, MAX + 3, MAX), "a redelivery past the limit");
    }
}
