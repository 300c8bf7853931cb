package dev.ledger.idempotency;

import com.fasterxml.jackson.databind.JsonNode;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * One POST as the idempotency layer sees it: whose key it is, and what request it stands for.
 * The key is stored only as a SHA-256 of client and key, so raw keys never reach Redis or
 * Postgres and two clients' equal keys are two different keys. {@code path} is the request's path
 * as the door gave it (for a broker command, the path of the POST it stands for), kept with the key
 * for the key's lookup.
 */
public record IdempotentRequest(String client, byte[] keyHash, RequestFingerprint fingerprint, String path) {

    public static IdempotentRequest of(String client, IdempotencyKey key, String method, String path, JsonNode body) {
        return new IdempotentRequest(client, keyHash(client, key), RequestFingerprint.of(method, path, body), path);
    }

    /** How the stores and the durable record name {@code client}'s {@code key}: SHA-256 of client, NUL, key. */
    static byte[] keyHash(String client, IdempotencyKey key) {
        MessageDigest sha = RequestFingerprint.sha256();
        sha.update(client.getBytes(StandardCharsets.UTF_8));
        sha.update((byte) 0);
        sha.update(key.value().getBytes(StandardCharsets.US_ASCII));
        return sha.digest();
    }

    /** The key as the stores name it: the hex of its hash, the same for the client and key whichever door. */
    public String keyId() {
        return HexFormat.of().formatHex(keyHash);
    }

    /** A short, non-reversible label for logs. */
    public String logLabel() {
        return HexFormat.of().formatHex(keyHash, 0, 6);
    }
}
