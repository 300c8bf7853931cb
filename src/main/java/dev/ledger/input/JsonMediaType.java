package dev.ledger.input;

import jakarta.ws.rs.core.MediaType;

import java.util.regex.Pattern;

/**
 * Whether a {@code Content-Type} (or a command's {@code content_type}) names JSON as this API reads it:
 * {@code application/json} (its {@code +json} relatives are compatible), in UTF-8 when a charset is
 * named. The one rule of every door.
 */
public final class JsonMediaType {
    private static final Pattern OWS_BEFORE_PARAMETER = Pattern.compile("[ \t]+;");

    private JsonMediaType() {
    }

    public static boolean isJson(String contentType) {
        MediaType type;
        try {
            // RFC 9110 allows white space before a parameter's ';', which MediaType.valueOf keeps in the subtype
            type = MediaType.valueOf(OWS_BEFORE_PARAMETER.matcher(contentType).replaceAll(";"));
        } catch (IllegalArgumentException malformed) {
            return false;
        }
        String charset = type.getParameters().get(MediaType.CHARSET_PARAMETER);
        return type.isCompatible(MediaType.APPLICATION_JSON_TYPE) && !type.isWildcardType() && !type.isWildcardSubtype()
                && (charset == null || charset.equalsIgnoreCase("utf-8"));
    }
}
