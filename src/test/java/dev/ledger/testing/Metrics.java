package dev.ledger.testing;

import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
                // while traces are recorded, a sample may end with an exemplar: "value # {trace_id=...} 1.0 timestamp"
                String sample = line.contains(" # ") ? line.substring(0, line.indexOf(" # ")) : line;
                return OptionalDouble.of(Double.parseDouble(sample.substring(sample.lastIndexOf(' ') + 1).trim()));
            }
        }
        return OptionalDouble.empty();
    }

    /**
     * The sum of every series of {@code series}' name whose labels include all of {@code series}' labels (e.g.
     * {@code ledger_dependency_calls_seconds_count{dependency="postgres",result="ok"}} sums it over every call and
     * shard); 0 when none is exposed.
     */
    public static double sum(String exposition, String series) {
        int brace = series.indexOf('{');
        String name = brace < 0 ? series : series.substring(0, brace);
        java.util.List<String> labels = brace < 0 ? java.util.List.of()
                : java.util.List.of(series.substring(brace + 1, series.length() - 1).split(","));
        double total = 0;
        for (String line : exposition.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            String sample = line.contains(" # ") ? line.substring(0, line.indexOf(" # ")) : line;
            String exposed = sample.indexOf('{') < 0 ? "" : sample.substring(sample.indexOf('{') + 1, sample.lastIndexOf('}'));
            java.util.List<String> has = java.util.List.of(exposed.split(","));
            if (has.containsAll(labels)) {
                total += Double.parseDouble(sample.substring(sample.lastIndexOf(' ') + 1).trim());
            }
        }
        return total;
    }

    private static final Pattern OUTCOME = Pattern.compile(
            "^ledger_idempotency_requests_seconds_count\\{outcome=\"([^\"]+)\",transport=\"([^\"]+)\"} (\\S+)(?: # .*)?$", Pattern.MULTILINE);

    /** How many requests of door {@code transport} the engine answered, by outcome ({@code ledger_idempotency_requests_seconds_count}). */
    public static Map<String, Double> outcomes(String exposition, String transport) {
        Map<String, Double> counts = new TreeMap<>();
        Matcher series = OUTCOME.matcher(exposition);
        while (series.find()) {
            if (series.group(2).equals(transport)) {
                counts.put(series.group(1), Double.parseDouble(series.group(3)));
            }
        }
        return counts;
    }

    /** The outcomes whose count changed from {@code before} to {@code after}, with the change. */
    public static Map<String, Double> changed(Map<String, Double> before, Map<String, Double> after) {
        Map<String, Double> changed = new TreeMap<>();
        after.forEach((outcome, count) -> {
            double delta = count - before.getOrDefault(outcome, 0.0);
            if (delta != 0) {
                changed.put(outcome, delta);
            }
        });
        return changed;
    }
}
