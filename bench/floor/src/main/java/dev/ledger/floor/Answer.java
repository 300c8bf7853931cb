package dev.ledger.floor;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The fixed bytes every floor answers: a replay's answer body (answer.json, which nginx serves too). */
final class Answer {
    static final String REPLAYED = "Idempotent-Replayed";
    static final byte[] BODY = read();

    private Answer() {
    }

    private static byte[] read() {
        try (InputStream in = Answer.class.getResourceAsStream("/answer.json")) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
