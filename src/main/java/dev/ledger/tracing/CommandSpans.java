package dev.ledger.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.smallrye.reactive.messaging.TracingMetadata;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The span of one broker command's handling. SmallRye's connectors continue the sender's trace
 * ({@code traceparent} header) with a {@code receive} span that ends as the message is handed over; this
 * {@code process} span, its child, lasts until the command is settled, carries the engine's outcome, and
 * is the parent of the Redis scripts, the statement and the outcome's publish.
 */
public final class CommandSpans {
    private CommandSpans() {
    }

    /**
     * Starts the span and makes it current on the calling Vert.x context, which must be a duplicated
     * context of this command's alone (its scope is never closed: the context goes with the command).
     * Null while the message's trace is not recorded (tracing off, or not sampled). The caller ends it.
     */
    public static Span startProcess(Tracer tracer, Message<?> message, String system, String destination) {
        Context received = TracingMetadata.fromMessage(message).map(TracingMetadata::getCurrentContext).orElse(null);
        if (received == null || !Span.fromContext(received).getSpanContext().isSampled()) {
            return null;
        }
        Span span = tracer.spanBuilder(destination + " process").setSpanKind(SpanKind.CONSUMER).setParent(received)
                .setAttribute("messaging.system", system)
                .setAttribute("messaging.destination.name", destination)
                .setAttribute("messaging.operation.type", "process")
                .startSpan();
        received.with(span).makeCurrent();
        return span;
    }

    /** Ends what {@link #startProcess} started, if it did. */
    public static void end(Span span) {
        if (span != null) {
            span.end();
        }
    }
}
