package dev.ledger.http;

import dev.ledger.idempotency.KeyState;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.time.Instant;

/** What became of a key, as {@code GET /idempotency-keys/{key}} answers it. */
@RegisterForReflection
@Schema(name = "IdempotencyKey", additionalProperties = Schema.False.class)
public record IdempotencyKeyView(
        @Schema(description = "The key, as the POST sent it (unquoted)", example = "order-8812") String key,
        @Schema(enumeration = {COMPLETED, IN_FLIGHT}, description = "`completed`: an answer is recorded with the key; "
                + "`in-flight`: its request is still being processed", example = COMPLETED) String state,
        @Schema(enumeration = "POST", description = "The request's method (every request that takes a key is a POST)")
        String method,
        @Schema(nullable = true, description = "The request's path, as it was sent; null for a key recorded before the "
                + "service kept paths", example = "/accounts/3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01/transactions") String path,
        @Schema(nullable = true, description = "The recorded answer's status (201, or the refusal's 404, 409 or 422); null "
                + "while in flight", example = "201") Integer status,
        @Schema(nullable = true, description = "The recorded answer's `Location`; null when it had none, and while in flight",
                example = "/accounts/3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01/transactions/9a1e4c7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c")
        String location,
        @Schema(type = SchemaType.STRING, format = "date-time", description = "When the key was first used",
                example = "2026-11-21T10:00:01Z") Instant createdAt,
        @Schema(type = SchemaType.STRING, format = "date-time", description = "When the key stops being remembered: the "
                + "retention's end once completed (what `Idempotency-Expires` said), the lease's end while in flight",
                example = "2026-11-22T10:00:01Z") Instant expiresAt) {
    static final String COMPLETED = "completed";
    static final String IN_FLIGHT = "in-flight";
    /** Every request that takes an Idempotency-Key is a POST. */
    private static final String METHOD = "POST";

    static IdempotencyKeyView of(String key, KeyState state) {
        return new IdempotencyKeyView(key, state.completed() ? COMPLETED : IN_FLIGHT, METHOD, state.path(), state.status(),
                state.location(), state.createdAt(), state.expiresAt());
    }
}
