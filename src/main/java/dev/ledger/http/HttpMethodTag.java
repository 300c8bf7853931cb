package dev.ledger.http;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import java.util.Set;

/**
 * Keeps the {@code method} tag of the HTTP metrics to the methods of RFC 9110 (any other becomes
 * {@code OTHER}). The HTTP layer accepts any token as a method, so without this a caller, even one
 * without a key, could add a time series to {@code /q/metrics} per made-up method, and write
 * strings of its choosing there. Quarkus applies every {@link MeterFilter} bean to the registry.
 */
public class HttpMethodTag {
    static final Set<String> STANDARD = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT");

    @Produces
    @Singleton
    MeterFilter standardMethodsOnly() {
        MeterFilter standard = MeterFilter.replaceTagValues("method", method -> STANDARD.contains(method) ? method : "OTHER");
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                // only the HTTP metrics: another meter's tag "method" is that meter's own
                return id.getName().startsWith("http.") ? standard.map(id) : id;
            }
        };
    }
}
