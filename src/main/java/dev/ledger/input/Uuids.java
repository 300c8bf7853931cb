package dev.ledger.input;

import java.util.Optional;
import java.util.UUID;

/** Path ids are UUIDs; anything else names nothing (a 404, never a 500). */
public final class Uuids {
    private static final int LENGTH = 36;

    private Uuids() {
    }

    /**
     * The UUID in its canonical 8-4-4-4-12 hex form, or empty. Checked by hand rather than with a
     * regular expression: every request with an id in its path runs this, and a regex allocates a
     * matcher per call. {@code UUID.fromString} alone accepts short
     * forms such as {@code 1-1-1-1-1}.
     */
    public static Optional<UUID> parse(String raw) {
        if (raw == null || raw.length() != LENGTH) {
            return Optional.empty();
        }
        for (int i = 0; i < LENGTH; i++) {
            char c = raw.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : !isHexDigit(c)) {
                return Optional.empty();
            }
        }
        return Optional.of(UUID.fromString(raw));
    }

    private static boolean isHexDigit(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
}
