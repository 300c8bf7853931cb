package dev.ledger.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;

import java.util.List;

/**
 * The W3C {@code traceparent} of a trace, as the outbox keeps it with an event: taken from the span of the
 * request or command that wrote the event, and turned back into the parent of the span that publishes it.
 */
public final class TraceParent {
    /** The W3C header, in messages as in HTTP. */
    public static final String HEADER = "traceparent";
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    /** A carrier that is the header's value alone. */
    private static final TextMapGetter<String> ONE_HEADER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String carrier) {
            return List.of(HEADER);
        }

        @Override
        public String get(String carrier, String key) {
            return HEADER.equals(key) ? carrier : null;
        }
    };

    private TraceParent() {
    }

    /** The current span's {@code traceparent}, or null while nothing is recorded (tracing off, or not sampled). */
    public static String current() {
        return Span.current().getSpanContext().isSampled() ? header(Context.current()) : null;
    }

    /**
     * A started producer span named {@code name}, child of the span {@code traceParent} names; null when
     * {@code traceParent} is null or malformed. The caller ends it.
     */
    public static Span startProducer(Tracer tracer, String name, String traceParent, String system, String destination) {
        Context parent = traceParent == null ? null : W3C.extract(Context.root(), traceParent, ONE_HEADER);
        if (parent == null || !Span.fromContext(parent).getSpanContext().isValid()) {
            return null;
        }
        return tracer.spanBuilder(name).setSpanKind(SpanKind.PRODUCER).setParent(parent)
                .setAttribute("messaging.system", system)
                .setAttribute("messaging.destination.name", destination)
                .setAttribute("messaging.operation.type", "send")
                .startSpan();
    }

    /** The context {@code traceParent} names: a remote parent; the root context when it is null or malformed. */
    public static Context extract(String traceParent) {
        return traceParent == null ? Context.root() : W3C.extract(Context.root(), traceParent, ONE_HEADER);
    }

    /** The {@code traceparent} that names {@code span}, for the message it publishes. */
    public static String of(Span span) {
        return header(Context.root().with(span));
    }

    /** OpenTelemetry's own W3C propagator writes the header, as it reads it. */
    private static String header(Context context) {
        String[] written = new String[1];
        W3C.inject(context, written, (carrier, key, value) -> {
            if (HEADER.equals(key)) {
                carrier[0] = value;
            }
        });
        return written[0];
    }
}
