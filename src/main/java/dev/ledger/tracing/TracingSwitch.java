package dev.ledger.tracing;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.Priorities;
import jakarta.annotation.Priority;

import java.util.Set;

/**
 * Traces are off unless an OTLP endpoint is configured. The sampler is {@code traceidratio} (chosen at
 * build time in {@code application.properties}); its ratio, {@code quarkus.otel.traces.sampler.arg}, is
 * read at run time, and answers {@code 0.0} while neither {@code quarkus.otel.exporter.otlp.endpoint} nor
 * its {@code .traces.} variant is set by the operator (Quarkus' own default endpoint, {@code localhost:4317},
 * does not count), {@code 1.0} once one is. Setting {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT} alone
 * switches tracing on; a ratio the operator sets wins either way.
 *
 * <p>The ratio, not {@code quarkus.otel.sdk.disabled}: Quarkus' disabled SDK still records every span
 * (it only drops them at the end), while a span the sampler drops is never recorded: nothing is built for
 * it beyond its ids, and the service's own instrumentation ({@link ClientSpans}, the outcome attribute,
 * the trace kept with an event) skips its work too. Not the sampler itself: it is fixed at build time.
 *
 * <p>Without an endpoint, Quarkus' Vert.x instrumentations (HTTP, SQL client, Redis client, event bus) are
 * switched off too: even with nothing sampled they build a span context per request, per statement and
 * per Redis call, and put its ids in the log's MDC, which cost replays and payments a measurable share
 * of their CPU (docs/performance.md, "Tracing off, tracing on"). So are the messaging connectors' own
 * instrumentations of every message on a channel (RabbitMQ's {@code tracing.enabled}, Kafka's
 * {@code tracing-enabled}, per channel or per connector): with nothing sampled they still read the message's
 * headers for a parent, build a context and a span for every command and every outcome published.
 *
 * <p>Registered through {@code META-INF/services}, as SmallRye Config finds interceptors; it runs before
 * the extension reads its runtime configuration.
 */
@Priority(Priorities.APPLICATION)
public class TracingSwitch implements ConfigSourceInterceptor {
    static final String RATIO = "quarkus.otel.traces.sampler.arg";
    private static final String ENDPOINT = "quarkus.otel.exporter.otlp.endpoint";
    private static final String TRACES_ENDPOINT = "quarkus.otel.exporter.otlp.traces.endpoint";

    /** Quarkus' Vert.x instrumentations, switched at run time: off with the ratio at 0, so that no request pays for them. */
    static final Set<String> INSTRUMENTATIONS = Set.of("quarkus.otel.instrument.vertx-http",
            "quarkus.otel.instrument.vertx-sql-client", "quarkus.otel.instrument.vertx-redis-client",
            "quarkus.otel.instrument.vertx-event-bus");

    /** A messaging channel's or connector's tracing switch: {@code tracing.enabled} (RabbitMQ), {@code tracing-enabled} (Kafka). */
    static boolean connectorTracing(String name) {
        return name.startsWith("mp.messaging.") && (name.endsWith(".tracing.enabled") || name.endsWith(".tracing-enabled"));
    }

    @Override
    public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
        ConfigValue value = context.proceed(name);
        boolean ratio = RATIO.equals(name);
        if (!ratio && !INSTRUMENTATIONS.contains(name) && !connectorTracing(name) || setByOperator(value)) {
            return value;
        }
        boolean endpoint = setByOperator(context.proceed(TRACES_ENDPOINT)) || setByOperator(context.proceed(ENDPOINT));
        String answer = ratio ? (endpoint ? "1.0" : "0.0") : Boolean.toString(endpoint);
        return ConfigValue.builder().withName(name).withValue(answer)
                .withConfigSourceName(TracingSwitch.class.getSimpleName()).withConfigSourceOrdinal(0)
                .build();
    }

    /**
     * Set in a source of the operator's or the application's (environment 300, application.properties 250,
     * system properties 400, ...), not in one of the defaults' sources, whose ordinals are below zero.
     */
    private static boolean setByOperator(ConfigValue value) {
        return value != null && value.getValue() != null && !value.getValue().isBlank()
                && value.getConfigSourceOrdinal() > 0;
    }
}
