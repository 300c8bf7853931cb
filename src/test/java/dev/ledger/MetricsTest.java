package dev.ledger;

import dev.ledger.testing.Metrics;
import org.junit.jupiter.api.Test;

import java.util.Map;
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

    @Test
    void aSampleWithAnExemplarIsReadWithoutIt() {
        // while traces are recorded, Micrometer appends the trace of one observation to a sample
        String traced = """
                ledger_idempotency_requests_seconds_count{outcome="executed",transport="http"} 4.0 # {span_id="9c1d",trace_id="7f2e"} 0.003 1795707896.247
                ledger_idempotency_requests_seconds_count{outcome="replayed-store",transport="http"} 2.0
                """;
        assertEquals(OptionalDouble.of(4.0), Metrics.value(traced,
                "ledger_idempotency_requests_seconds_count{outcome=\"executed\",transport=\"http\"}"));
        assertEquals(Map.of("executed", 4.0, "replayed-store", 2.0), Metrics.outcomes(traced, "http"));
    }
}
