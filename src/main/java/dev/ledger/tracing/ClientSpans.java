package dev.ledger.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.smallrye.mutiny.Uni;

/**
 * A client span around one call a request makes, for the calls no library traces for us: the Redis
 * scripts, which leave with other requests' commands in one write per event-loop turn, so that the
 * Redis client's own span (one per write) could belong to no single request's trace. The span runs from
 * the call's subscription to its reply, under the request's span; nothing is made while the request's
 * trace is not recorded (tracing off, or not sampled).
 */
public final class ClientSpans {
    public static final AttributeKey<String> DB_SYSTEM = AttributeKey.stringKey("db.system");
    public static final AttributeKey<String> DB_OPERATION = AttributeKey.stringKey("db.operation.name");
    public static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");

    private ClientSpans() {
    }

    /**
     * {@code call}, traced as a {@code CLIENT} span named "{@code operation detail}" under the current span; {@code call}
     * itself while nothing is recorded. Call it where the current span is the request's (at subscription).
     */
    public static <T> Uni<T> around(Tracer tracer, String system, String operation, String server,
                                    AttributeKey<String> detailKey, String detail, Uni<T> call) {
        if (!Span.current().isRecording()) {
            return call;
        }
        Span span = tracer.spanBuilder(operation + " " + detail).setSpanKind(SpanKind.CLIENT)
                .setAttribute(DB_SYSTEM, system).setAttribute(DB_OPERATION, operation)
                .setAttribute(SERVER_ADDRESS, server).setAttribute(detailKey, detail)
                .startSpan();
        return call.onItemOrFailure().invoke((item, failure) -> {
                    if (failure != null) {
                        span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName());
                    }
                    span.end();
                })
                .onCancellation().invoke(span::end);
    }
}
