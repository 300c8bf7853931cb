package dev.ledger.tracing;

import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.micrometer.runtime.export.exemplars.OpentelemetryExemplarSamplerProvider;
import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.Optional;

/**
 * Exemplars (a histogram's sample in {@code /q/metrics} carrying the trace id of a request it counted) only
 * while traces are recorded. Quarkus' sampler, which the Prometheus registry is given when OpenTelemetry is
 * present, looks the current span up in OpenTelemetry's context for every timer recorded; with tracing off
 * ({@link TracingSwitch}: the ratio at 0) no span is ever sampled, so it never yields an exemplar, yet it cost
 * a replay 1.3 % of its CPU (docs/performance.md). Off, the registry gets no sampler; on, Quarkus' own.
 */
@Singleton
public class Exemplars {
    @Produces
    @Alternative
    @Priority(1)
    @Singleton
    Optional<ExemplarSampler> sampler(@ConfigProperty(name = TracingSwitch.RATIO, defaultValue = "0") double ratio) {
        return ratio > 0 ? new OpentelemetryExemplarSamplerProvider().exemplarSampler() : Optional.empty();
    }
}
