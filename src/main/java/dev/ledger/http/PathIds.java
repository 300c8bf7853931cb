package dev.ledger.http;

import java.util.Optional;
import java.util.UUID;

/** Path ids are UUIDs; anything else names nothing (a 404, never a 500). */
public final class PathIds {
    private static final java.util.regex.Pattern UUID_FORM =
            java.util.regex.Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    private PathIds() {
    }

    public static Optional<UUID> parse(String raw) {
        // UUID.fromString alone accepts short forms such as 1-1-1-1-1
        if (raw == null || !UUID_FORM.matcher(raw).matches()) {
            return Optional.empty();
        }
        return Optional.of(UUID.fromString(raw));
    }
}
