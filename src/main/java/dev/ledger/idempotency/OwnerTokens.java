package dev.ledger.idempotency;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The tokens that fence each request's writes to its key: this process's random id and a counter,
 * unique across processes and never repeated within one. Not {@code UUID.randomUUID()} per request,
 * which reads the locked system random source every time; a token needs uniqueness, not secrecy. One
 * instance per executor, not static fields: the native-image builder initialises classes at build time
 * and would bake a static random id into the image, the same for every process.
 */
final class OwnerTokens {
    private final String prefix = UUID.randomUUID() + ":";
    private final AtomicLong counter = new AtomicLong();

    String next() {
        return prefix + Long.toHexString(counter.incrementAndGet());
    }
}
