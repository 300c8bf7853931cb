package dev.ledger.http;

import java.time.Duration;
import java.util.List;

/**
 * The {@code wait} preference of RFC 7240's {@code Prefer} header: {@code Prefer: wait=5}, also among
 * other preferences ({@code Prefer: respond-async, wait=5}) or quoted ({@code wait="5"}). A value
 * that is not a non-negative integer of seconds is ignored, as RFC 7240 asks of a preference a
 * server cannot read; so is a repeated {@code wait} after the first. A wait too large to represent is
 * read as 2^31 seconds, as RFC 9111 reads delta-seconds, and so is capped like any long wait.
 */
public final class PreferWait {
    public static final String PREFER = "Prefer";
    public static final String APPLIED = "Preference-Applied";
    private static final long DELTA_SECONDS_MAX = 1L << 31;

    private PreferWait() {
    }

    /** The requested wait, or zero when none is asked (or none can be read). */
    public static Duration of(List<String> preferHeaders) {
        for (String header : preferHeaders) {
            for (String preference : header.split(",")) {
                // a preference's own parameters follow ';' and do not concern its value
                String token = preference.split(";", 2)[0].trim();
                int equals = token.indexOf('=');
                if (equals < 0 || !token.substring(0, equals).trim().equalsIgnoreCase("wait")) {
                    continue;
                }
                String value = token.substring(equals + 1).trim();
                if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                    value = value.substring(1, value.length() - 1);
                }
                return seconds(value);
            }
        }
        return Duration.ZERO;
    }

    private static Duration seconds(String value) {
        if (value.isEmpty() || !value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Duration.ZERO;
        }
        // delta-seconds past what can be represented count as 2^31 (RFC 9111, 1.2.2); the cap then applies
        return Duration.ofSeconds(value.length() > 10 ? DELTA_SECONDS_MAX : Math.min(Long.parseLong(value), DELTA_SECONDS_MAX));
    }

    /** The {@code Preference-Applied} value for a wait of {@code applied}. */
    public static String applied(Duration applied) {
        return "wait=" + applied.toSeconds();
    }
}
