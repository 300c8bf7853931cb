package dev.ledger.http;

/** Integer query parameters: absent gives the default; not an integer or out of range is a 400. */
public final class QueryParams {
    private QueryParams() {
    }

    public static long integer(String name, String raw, long defaultValue, long min, long max) {
        if (raw == null) {
            return defaultValue;
        }
        long value;
        try {
            if (!raw.matches("-?[0-9]{1,19}")) {
                throw new NumberFormatException();
            }
            value = Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw JsonBody.invalid("Query parameter '" + name + "' must be an integer between " + min + " and " + max);
        }
        if (value < min || value > max) {
            throw JsonBody.invalid("Query parameter '" + name + "' must be between " + min + " and " + max);
        }
        return value;
    }
}
