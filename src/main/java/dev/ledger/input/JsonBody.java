package dev.ledger.input;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * A POST body read strictly, as a payments API must: UTF-8 JSON, one object, no duplicate or
 * unknown members, integers only as integer literals within range, strings only as strings.
 * Every violation is a 400 {@code invalid-request} whose detail names the member.
 */
public final class JsonBody {
    public static final int MAX_DEPTH = 32;

    private static final JsonMapper STRICT = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
            .build();

    static {
        STRICT.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
                .maxNestingDepth(MAX_DEPTH).maxNumberLength(100).build());
    }

    private final JsonNode tree;

    private JsonBody(JsonNode tree) {
        this.tree = tree;
    }

    /** The members of a body described by {@code record}: its components' names, in order. */
    public static List<String> members(Class<? extends Record> record) {
        return Arrays.stream(record.getRecordComponents()).map(RecordComponent::getName).toList();
    }

    /** Parses a body and checks it is an object whose members are all among {@code allowed}. */
    public static JsonBody parse(byte[] body, int maxBytes, List<String> allowed) {
        if (body == null || body.length == 0) {
            throw invalid("The request body is empty; a JSON object is required");
        }
        if (body.length > maxBytes) {
            throw new ProblemException(ProblemType.PAYLOAD_TOO_LARGE,
                    "The request body is " + body.length + " bytes; at most " + maxBytes + " are accepted");
        }
        requireUtf8(body);
        JsonNode tree;
        try {
            tree = STRICT.readTree(body);
        } catch (JsonProcessingException e) {
            throw invalid(malformed(e));
        } catch (IOException e) {
            throw invalid("The request body could not be read");
        }
        if (tree == null || !tree.isObject()) {
            throw invalid("The request body must be a JSON object");
        }
        for (Iterator<String> names = tree.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw invalid("Unknown member '" + printable(name) + "'; allowed: "
                        + (allowed.isEmpty() ? "none" : String.join(", ", allowed)));
            }
        }
        return new JsonBody(tree);
    }

    /**
     * Refuses a body that is not well-formed UTF-8 (RFC 3629). Jackson's own decoder refuses most
     * ill-formed bytes but decodes overlong forms ({@code C0 AF} as {@code /}), which RFC 3629 forbids
     * because they let one character hide behind another's bytes; the JDK's decoder refuses them all.
     * A body of ASCII only, the usual one, is passed by the first loop.
     */
    static void requireUtf8(byte[] body) {
        for (byte b : body) {
            if (b < 0) {
                ByteBuffer in = ByteBuffer.wrap(body);
                // a new decoder reports malformed input: it neither replaces nor skips it
                if (StandardCharsets.UTF_8.newDecoder().decode(in, CharBuffer.allocate(body.length), true).isError()) {
                    throw invalid("The request body is not valid UTF-8 (at byte " + in.position() + ")");
                }
                return;
            }
        }
    }

    /**
     * What is wrong with a body the parser refused, in the contract's words: the parser's own
     * message names its classes and features ({@code DeserializationFeature...}), which API.md keeps
     * from clients.
     */
    static String malformed(JsonProcessingException e) {
        String where = e.getLocation() == null || e.getLocation().getLineNr() < 1 ? ""
                : " (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")";
        String what;
        if (e instanceof StreamConstraintsException) {
            what = "nests deeper than " + MAX_DEPTH + " levels or has a number of more than 100 digits";
        } else if (e instanceof MismatchedInputException && e.getOriginalMessage().startsWith("Trailing token")) {
            what = "has content after its JSON object";
        } else if (e instanceof MismatchedInputException) {
            what = "ends before its JSON value does";
        } else if (e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("Duplicate field")) {
            what = "names a member twice";
        } else if (e.getOriginalMessage() != null && e.getOriginalMessage().contains("UTF")) {
            what = "is not valid UTF-8";
        } else {
            what = "is not valid JSON (RFC 8259: no comments, NaN, single quotes or trailing commas)";
        }
        return "The request body " + what + where;
    }

    public JsonNode tree() {
        return tree;
    }

    /** A required integer literal in {@code [min, max]}. */
    public long requiredLong(String name, long min, long max) {
        Long value = optionalLong(name, min, max);
        if (value == null) {
            throw invalid("'" + name + "' is required");
        }
        return value;
    }

    /** An optional integer literal in {@code [min, max]} (absent or null gives null). */
    public Long optionalLong(String name, long min, long max) {
        JsonNode node = tree.get(name);
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isIntegralNumber()) {
            throw invalid("'" + name + "' must be an integer literal (not a string, float or exponent)");
        }
        if (!node.canConvertToLong() || node.longValue() < min || node.longValue() > max) {
            throw invalid("'" + name + "' must be between " + min + " and " + max);
        }
        return node.longValue();
    }

    /** An optional boolean literal (absent or null gives null). */
    public Boolean optionalBoolean(String name) {
        JsonNode node = tree.get(name);
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isBoolean()) {
            throw invalid("'" + name + "' must be true or false");
        }
        return node.booleanValue();
    }

    /** A required id: a string holding a UUID ({@code what} says whose, for the detail). */
    public UUID requiredUuid(String name, String what) {
        Optional<UUID> id = Uuids.parse(requiredString(name));
        if (id.isEmpty()) {
            throw invalid("'" + name + "' must be " + what + " (a UUID)");
        }
        return id.get();
    }

    /** A required string. */
    public String requiredString(String name) {
        String value = optionalString(name, Integer.MAX_VALUE);
        if (value == null) {
            throw invalid("'" + name + "' is required");
        }
        return value;
    }

    /**
     * An optional string (absent or null gives null) of at most {@code maxChars} characters, with
     * no NUL and no unpaired surrogate (neither can be stored as text).
     */
    public String optionalString(String name, int maxChars) {
        JsonNode node = tree.get(name);
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isTextual()) {
            throw invalid("'" + name + "' must be a string");
        }
        String value = node.textValue();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == 0) {
                throw invalid("'" + name + "' must not contain NUL characters");
            }
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw invalid("'" + name + "' contains an unpaired UTF-16 surrogate");
            }
        }
        if (value.codePointCount(0, value.length()) > maxChars) {
            throw invalid("'" + name + "' must be at most " + maxChars + " characters");
        }
        return value;
    }

    private static String printable(String name) {
        String clipped = name.length() > 64 ? name.substring(0, 64) + "…" : name;
        return clipped.replaceAll("\\p{Cntrl}", "?");
    }

    static ProblemException invalid(String detail) {
        return new ProblemException(ProblemType.INVALID_REQUEST, detail);
    }
}
