package dev.ledger.idempotency;

import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;

import java.util.List;

/**
 * The value of an {@code Idempotency-Key} header: 1 to 255 visible ASCII characters, sent bare
 * ({@code abc}) or as an RFC 8941 structured-field string ({@code "abc"}, where {@code \"} and
 * {@code \\} are escapes and the quotes are not part of the key). Both forms name the same key.
 */
public record IdempotencyKey(String value) {
    public static final String HEADER = "Idempotency-Key";
    public static final int MAX_LENGTH = 255;
    private static final String QUOTE_IT = "; quote the key as a structured-field string";

    /**
     * Parses the header's values (a request may repeat a header). Throws the 400 problem
     * {@code idempotency-key-missing} or {@code idempotency-key-invalid}.
     */
    public static IdempotencyKey parse(List<String> headerValues) {
        if (headerValues == null || headerValues.isEmpty()) {
            throw new ProblemException(ProblemType.IDEMPOTENCY_KEY_MISSING,
                    "Every POST needs an Idempotency-Key header");
        }
        if (headerValues.size() > 1) {
            throw invalid("send exactly one Idempotency-Key header");
        }
        String raw = headerValues.get(0).strip();
        return sized(raw.startsWith("\"") ? unquote(raw) : bare(raw, QUOTE_IT));
    }

    /**
     * A key given bare, with no quoting (a broker command's {@code message_id}): the header's bare
     * form, 1-255 visible ASCII characters without '"'. Throws the same problems as {@link #parse}.
     */
    public static IdempotencyKey parseBare(String value, String name) {
        if (value == null) {
            throw new ProblemException(ProblemType.IDEMPOTENCY_KEY_MISSING, "Every command needs a " + name);
        }
        return sized(bare(value, QUOTE_IT));
    }

    /**
     * The key a lookup's path names ({@code GET /idempotency-keys/{key}}, percent-decoded): the bare form, as
     * {@link #parseBare}; quotes are not taken off, so {@code "abc"} is malformed. Throws {@code idempotency-key-invalid}.
     */
    public static IdempotencyKey inPath(String value) {
        return sized(bare(value, "; the path holds the key itself, without the quotes a header may put around it"));
    }

    private static IdempotencyKey sized(String key) {
        if (key.isEmpty()) {
            throw invalid("the key is empty");
        }
        if (key.length() > MAX_LENGTH) {
            throw invalid("the key is longer than " + MAX_LENGTH + " characters");
        }
        return new IdempotencyKey(key);
    }

    /** {@code quoteHint}: what a key with a '"' should have been sent as. */
    private static String bare(String raw, String quoteHint) {
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                throw invalid("the key must be visible ASCII characters (0x21-0x7E)");
            }
            if (c == '"') {
                throw invalid("a bare key cannot contain '\"'" + quoteHint);
            }
        }
        return raw;
    }

    /** RFC 8941 sf-string: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE, unescaped = %x20-21 / %x23-5B / %x5D-7E. */
    private static String unquote(String raw) {
        if (raw.length() < 2 || !raw.endsWith("\"")) {
            throw invalid("a quoted key must end with '\"'");
        }
        StringBuilder key = new StringBuilder(raw.length());
        for (int i = 1; i < raw.length() - 1; i++) {
            char c = raw.charAt(i);
            if (c == '\\') {
                if (i + 1 >= raw.length() - 1) {
                    throw invalid("a quoted key cannot end with '\\'");
                }
                char next = raw.charAt(++i);
                if (next != '"' && next != '\\') {
                    throw invalid("only \\\" and \\\\ are escapes in a quoted key");
                }
                key.append(next);
            } else if (c == '"') {
                throw invalid("a '\"' inside a quoted key must be escaped as \\\"");
            } else if (c < 0x20 || c > 0x7E) {
                throw invalid("the key must be printable ASCII characters");
            } else {
                key.append(c);
            }
        }
        return key.toString();
    }

    private static ProblemException invalid(String why) {
        return new ProblemException(ProblemType.IDEMPOTENCY_KEY_INVALID, "Malformed Idempotency-Key: " + why);
    }

    @Override
    public String toString() {
        // keys are client secrets of a sort: never print one whole
        return "IdempotencyKey[" + value.length() + " chars]";
    }
}
