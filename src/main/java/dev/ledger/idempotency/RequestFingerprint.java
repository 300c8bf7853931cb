package dev.ledger.idempotency;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;

/**
 * What makes two requests "the same request" for an idempotency key: SHA-256 over the method,
 * the resource's path and the body's canonical JSON (object members sorted, no insignificant white
 * space, a member whose value is {@code null} left out), so that white space, member order, escapes
 * and an explicit {@code null} for an optional member do not matter but any change of value does.
 * Every body reads a {@code null} member as absent, so the two are one request. The path is compared
 * as the resource it names, not its spelling ({@link #resourcePath}).
 */
public record RequestFingerprint(byte[] bytes) {
    /** Writes a tree with every object's members sorted by name, at every depth, each number as its node holds it. */
    private static final ObjectMapper CANONICAL = JsonMapper.builder()
            .enable(JsonNodeFeature.WRITE_PROPERTIES_SORTED)
            .build();
    /** A SHA-256 to clone: cheaper than asking the providers for one per request. */
    private static final MessageDigest SHA_256 = newSha256();

    public static RequestFingerprint of(String method, String path, JsonNode body) {
        try {
            // The tree written as it is, members sorted: the same bytes as the maps it once went through
            // (RequestFingerprintTest compares the two), which stored fingerprints were made of
            byte[] canonical = CANONICAL.writeValueAsBytes(withoutNullMembers(body));
            MessageDigest sha = sha256();
            sha.update((method + '\n' + resourcePath(path) + '\n').getBytes(StandardCharsets.UTF_8));
            sha.update(canonical);
            return new RequestFingerprint(sha.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The path as the fingerprint compares it: ids are UUIDs, which name the same account in either case,
     * the rest of an API path is lower case, and a trailing slash names the same resource.
     */
    static String resourcePath(String path) {
        String lower = path.toLowerCase(Locale.ROOT);
        return lower.length() > 1 && lower.endsWith("/") ? lower.substring(0, lower.length() - 1) : lower;
    }

    private static JsonNode withoutNullMembers(JsonNode body) {
        if (body instanceof ObjectNode object && object.properties().stream().anyMatch(member -> member.getValue().isNull())) {
            ObjectNode copy = object.deepCopy();
            copy.properties().removeIf(member -> member.getValue().isNull());
            return copy;
        }
        return body;
    }

    public static RequestFingerprint fromHex(String hex) {
        return new RequestFingerprint(HexFormat.of().parseHex(hex));
    }

    public String hex() {
        return HexFormat.of().formatHex(bytes);
    }

    static MessageDigest sha256() {
        try {
            return (MessageDigest) SHA_256.clone();
        } catch (CloneNotSupportedException e) {
            return newSha256();
        }
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RequestFingerprint other && MessageDigest.isEqual(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "RequestFingerprint[" + hex().substring(0, 12) + "]";
    }
}
