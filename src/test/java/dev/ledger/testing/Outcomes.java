package dev.ledger.testing;

import io.restassured.RestAssured;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the engine answered one door ({@code transport}) from now on, read from {@code /q/metrics} of the
 * {@code @QuarkusTest} application: {@code ledger_idempotency_requests_seconds_count} by outcome.
 */
public final class Outcomes {
    private final String transport;
    private final Map<String, Double> before;

    private Outcomes(String transport) {
        this.transport = transport;
        this.before = now(transport);
    }

    /** Counts from now on, for the door {@code transport} ({@code http}, {@code rabbitmq}, {@code kafka}). */
    public static Outcomes since(String transport) {
        return new Outcomes(transport);
    }

    private static Map<String, Double> now(String transport) {
        return Metrics.outcomes(RestAssured.get("/q/metrics").asString(), transport);
    }

    /** The outcomes counted since, with how many of each. */
    public Map<String, Double> changed() {
        return Metrics.changed(before, now(transport));
    }

    /** Exactly these outcomes were counted since, and no other. */
    public void assertChanged(Map<String, Double> expected) {
        assertEquals(expected, changed(), "ledger_idempotency_requests_seconds_count{transport=\"" + transport + "\"} since");
    }
}
