package dev.ledger.http;

import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;

import java.util.List;

/**
 * Integer query parameters: absent gives the default; not an integer, out of range or given more
 * than once (which of {@code limit=5&limit=500} would be meant?) is a 400.
 */
public final class QueryParams {
    private QueryParams() {
    }

    public static long integer(String name, List<String> values, long defaultValue, long min, long max) {
        if (values.isEmpty()) {
            return defaultValue;
        }
        if (values.size() > 1) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "Query parameter '" + name + "' must be given at most once");
        }
        String raw = values.get(0);
        long value;
        try {
            if (!raw.matches("-?[0-9]{1,19}")) {
                throw new NumberFormatException();
            }
            value = Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "Query parameter '" + name + "' must be an integer between " + min + " and " + max);
        }
        if (value < min || value > max) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "Query parameter '" + name + "' must be between " + min + " and " + max);
        }
        return value;
    }
}
