package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The 401 every refused credential gets (API.md, "Authentication"), checked in full whatever client sent the
 * request: the status, the challenge, a problem body with its type, title, status and a detail, no replay
 * header, and nothing of the internals.
 */
public final class Unauthorized {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Unauthorized() {
    }

    /** {@code header}: a header's value by name, or null; {@code what}: the case, for the failure's message. */
    public static void assertUnauthorized(int status, UnaryOperator<String> header, String body, String what) {
        assertEquals(401, status, what + ": " + body);
        assertEquals("Bearer realm=\"ledger\"", header.apply("WWW-Authenticate"), what);
        String contentType = header.apply("Content-Type");
        assertTrue(contentType != null && contentType.startsWith("application/problem+json"), what + ": " + contentType);
        JsonNode problem;
        try {
            problem = JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": the body is not JSON: " + body, e);
        }
        assertEquals("/problems/unauthorized", problem.path("type").asText(), what);
        assertEquals("Unauthorized", problem.path("title").asText(), what);
        assertEquals(401, problem.path("status").asInt(), what);
        assertFalse(problem.path("detail").asText().isBlank(), what);
        assertNull(header.apply("Idempotent-Replayed"), what);
        assertFalse(body.matches("(?s).*(Exception|org\\.|io\\.|java\\.|dev\\.ledger).*"), what + ": " + body);
    }
}
