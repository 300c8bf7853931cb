package dev.ledger.testing;

import java.util.OptionalDouble;

/** Reads the service's metrics as {@code /q/metrics} exposes them (Prometheus text). */
public final class Metrics {
    private Metrics() {
    }

    /**
     * The value of {@code series} in {@code exposition}: a name with its labels exactly as exposed
     * (e.g. {@code ledger_commands_total{outcome="applied",problem="none"}}), or a bare name, which also
     * matches the first series of that name whatever its labels. Empty when the series is not exposed.
     */
    public static OptionalDouble value(String exposition, String series) {
        boolean bare = series.indexOf('{') < 0;
        for (String line : exposition.split("\n")) {
            if (line.startsWith(series + " ") || (bare && line.startsWith(series + "{"))) {
                return OptionalDouble.of(Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim()));
            }
        }
        return OptionalDouble.empty();
    }
}
