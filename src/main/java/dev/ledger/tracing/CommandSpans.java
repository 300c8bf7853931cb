package dev.ledger.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

/**
 * The span of one broker command's handling. The consumers continue the sender's trace ({@code traceparent}
 * header) with a {@code receive} span that ends as the message is handed over (SmallRye's Kafka connector, and
 * {@link #received} for RabbitMQ's door); this
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
    public static Span startProcess(Tracer tracer, Context received, String system, String destination) {
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

    /**
     * The {@code receive} span of a command a door's own consumer took (as SmallRye's connectors make one): the child
     * of the sender's span that {@code traceParent} names, or a new trace's root without one; ended at once. Its
     * context, for {@link #startProcess}; null when it is not recorded.
     */
    public static Context received(Tracer tracer, String traceParent, String system, String destination) {
        Context parent = TraceParent.extract(traceParent);
        Span span = tracer.spanBuilder(destination + " receive").setSpanKind(SpanKind.CONSUMER).setParent(parent)
                .setAttribute("messaging.system", system)
                .setAttribute("messaging.destination.name", destination)
                .setAttribute("messaging.operation.type", "receive")
                .startSpan();
        span.end();
        return span.getSpanContext().isSampled() ? parent.with(span) : null;
    }

    /** Ends what {@link #startProcess} started, if it did. */
    public static void end(Span span) {
        if (span != null) {
            span.end();
        }
    }
}
