package dev.ledger.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

/**
 * The W3C {@code traceparent} of a trace, as the outbox keeps it with an event: taken from the span of the
 * request or command that wrote the event, and turned back into the parent of the span that publishes it.
 */
public final class TraceParent {
    /** The W3C header, in messages as in HTTP. */
    public static final String HEADER = "traceparent";

    private TraceParent() {
    }

    /** The current span's {@code traceparent}, or null while nothing is recorded (tracing off, or not sampled). */
    public static String current() {
        SpanContext span = Span.current().getSpanContext();
        if (!span.isValid() || !span.isSampled()) {
            return null;
        }
        return "00-" + span.getTraceId() + "-" + span.getSpanId() + "-" + span.getTraceFlags().asHex();
    }

    /**
     * A started producer span named {@code name}, child of the span {@code traceParent} names; null when
     * {@code traceParent} is null or malformed. The caller ends it.
     */
    public static Span startProducer(Tracer tracer, String name, String traceParent, String system, String destination) {
        SpanContext parent = parse(traceParent);
        if (parent == null) {
            return null;
        }
        return tracer.spanBuilder(name).setSpanKind(SpanKind.PRODUCER)
                .setParent(Context.root().with(Span.wrap(parent)))
                .setAttribute("messaging.system", system)
                .setAttribute("messaging.destination.name", destination)
                .setAttribute("messaging.operation.type", "send")
                .startSpan();
    }

    /** The {@code traceparent} that names {@code span}, for the message it publishes. */
    public static String of(Span span) {
        SpanContext context = span.getSpanContext();
        return "00-" + context.getTraceId() + "-" + context.getSpanId() + "-" + context.getTraceFlags().asHex();
    }

    static SpanContext parse(String traceParent) {
        // 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>
        if (traceParent == null || traceParent.length() != 55 || !traceParent.startsWith("00-")
                || traceParent.charAt(35) != '-' || traceParent.charAt(52) != '-') {
            return null;
        }
        SpanContext context = SpanContext.createFromRemoteParent(traceParent.substring(3, 35), traceParent.substring(36, 52),
                TraceFlags.fromHex(traceParent, 53), TraceState.getDefault());
        return context.isValid() ? context : null;
    }
}
