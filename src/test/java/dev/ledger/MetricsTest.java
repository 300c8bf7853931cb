package dev.ledger;

import dev.ledger.testing.Metrics;
import org.junit.jupiter.api.Test;

import java.util.OptionalDouble;

import static org.junit.jupiter.api.Assertions.assertEquals;

class MetricsTest {
    private static final String EXPOSITION = """
            # HELP ledger_commands_total Commands by outcome
            # TYPE ledger_commands_total counter
            ledger_commands_total{outcome="applied",problem="none"} 3.0
            ledger_commands_total{outcome="replayed",problem="none"} 1.0
            ledger_commands_queued 0.0
            ledger_commands_queued_extra 7.0
            """;

    @Test
    void aSeriesIsReadByItsNameAndLabels() {
        assertEquals(OptionalDouble.of(1.0), Metrics.value(EXPOSITION, "ledger_commands_total{outcome=\"replayed\",problem=\"none\"}"));
        assertEquals(OptionalDouble.of(0.0), Metrics.value(EXPOSITION, "ledger_commands_queued"));
    }

    @Test
    void aBareNameTakesTheFirstSeriesOfThatName() {
        assertEquals(OptionalDouble.of(3.0), Metrics.value(EXPOSITION, "ledger_commands_total"));
    }

    @Test
    void anAbsentSeriesIsEmptyNotAPrefixOfAnother() {
        assertEquals(OptionalDouble.empty(), Metrics.value(EXPOSITION, "ledger_commands"));
        assertEquals(OptionalDouble.empty(), Metrics.value(EXPOSITION, "ledger_commands_total{outcome=\"invalid\",problem=\"none\"}"));
    }
}
