package dev.ledger.idempotency;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import org.jboss.logging.MDC;

/**
 * Leaves what the engine answered where a person looking at one request finds it: as the attribute
 * {@code ledger.idempotency.outcome} of the current span (the HTTP request's, or the command's consumer
 * span), and as the field {@code outcome} of every later log line of the request (the MDC, which Quarkus
 * keeps per request on its Vert.x context). A no-op span while tracing is off.
 */
final class OutcomeTrail {
    static final AttributeKey<String> ATTRIBUTE = AttributeKey.stringKey("ledger.idempotency.outcome");
    static final String LOG_FIELD = "outcome";

    private OutcomeTrail() {
    }

    static void record(Outcome outcome) {
        String name = name(outcome);
        Span span = Span.current();
        if (span.isRecording()) {
            span.setAttribute(ATTRIBUTE, name);
        }
        MDC.put(LOG_FIELD, name);
    }

    /** The outcome's name in traces and logs: the tag of {@code ledger_idempotency_requests_seconds} ({@link OutcomeMetrics.Kind}). */
    static String name(Outcome outcome) {
        return OutcomeMetrics.Kind.of(outcome).tag();
    }
}
