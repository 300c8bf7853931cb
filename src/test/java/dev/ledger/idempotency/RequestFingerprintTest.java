package dev.ledger.idempotency;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class RequestFingerprintTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static RequestFingerprint of(String method, String path, String body) throws Exception {
        JsonNode tree = JSON.readTree(body);
        return RequestFingerprint.of(method, path, tree);
    }

    @Test
    void ignoresWhiteSpaceMemberOrderAndEscapes() throws Exception {
        RequestFingerprint a = of("POST", "/accounts", "{\"currency\":\"EUR\",\"x\":{\"b\":1,\"a\":[1,2]}}");
        RequestFingerprint b = of("POST", "/accounts", " {\n \"x\" : { \"a\" : [ 1 , 2 ], \"b\" : 1 },\"currency\" : \"\\u0045UR\" } ");
        assertEquals(a, b);
        assertEquals(a.hex(), b.hex());
    }

    @Test
    void aNullMemberIsTheMemberLeftOut() throws Exception {
        String path = "/accounts/a/transactions";
        assertEquals(of("POST", path, "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":1}"),
                of("POST", path, "{\"type\":\"CREDIT\",\"reference\":null,\"amount\":1,\"sequence\":1}"));
        assertNotEquals(of("POST", path, "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":1}"),
                of("POST", path, "{\"type\":\"CREDIT\",\"reference\":\"null\",\"amount\":1,\"sequence\":1}"));
    }

    @Test
    void changesWithAnyValueMethodOrPath() throws Exception {
        RequestFingerprint base = of("POST", "/accounts", "{\"currency\":\"EUR\"}");
        assertNotEquals(base, of("POST", "/accounts", "{\"currency\":\"USD\"}"));
        assertNotEquals(base, of("PUT", "/accounts", "{\"currency\":\"EUR\"}"));
        assertNotEquals(base, of("POST", "/accounts/x", "{\"currency\":\"EUR\"}"));
        assertNotEquals(of("POST", "/a", "[1,2]"), of("POST", "/a", "[2,1]"));
    }

    @Test
    void comparesThePathAsTheResourceItNames() throws Exception {
        String body = "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":1}";
        String id = "3f0c8a1e-5b7d-4c2a-9e1f-0a1b2c3d4e5f";
        RequestFingerprint lower = of("POST", "/accounts/" + id + "/transactions", body);
        assertEquals(lower, of("POST", "/accounts/" + id.toUpperCase() + "/transactions", body));
        assertEquals(lower, of("POST", "/accounts/" + id + "/transactions/", body));
        assertNotEquals(lower, of("POST", "/accounts/" + id + "/transactions/x", body));
    }

    /**
     * The fingerprint of a body is the one stored so far for it, which was made of the tree turned into plain maps
     * and lists, written with map entries sorted (the reference below). Compared on bodies as the doors
     * parse them (JsonBody's parser: integers as big integers) and as a plain parser does, nested objects, arrays,
     * escapes, numbers of every kind and nested nulls included.
     */
    @Test
    void theCanonicalBytesAreThoseOfTheMapsTheyReplace() throws Exception {
        ObjectMapper maps = com.fasterxml.jackson.databind.json.JsonMapper.builder()
                .enable(com.fasterxml.jackson.databind.SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS).build();
        ObjectMapper bigInts = com.fasterxml.jackson.databind.json.JsonMapper.builder()
                .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_INTEGER_FOR_INTS).build();
        java.util.List<String> bodies = new java.util.ArrayList<>(java.util.List.of(
                "{}", "[]", "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":1}",
                "{\"z\":1,\"a\":{\"y\":[3,{\"k\":null,\"b\":true,\"a\":false}],\"x\":\"\\u00e9\\n\\\"q\\\"\"},\"m\":null}",
                "{\"n\":-0,\"d\":1.0,\"e\":1e10,\"f\":-2.5E-3,\"g\":123456789012345678901234567890,\"h\":9223372036854775807}",
                "{\"B\":1,\"a\":2,\"\\u00e9\":3,\"_\":4,\"10\":5,\"9\":6}",
                "[1,\"two\",null,[],{},{\"b\":[{\"d\":1,\"c\":2}]}]", "\"just a string\"", "42", "null"));
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 200; i++) {
            bodies.add(randomJson(random, 3));
        }
        for (String body : bodies) {
            for (ObjectMapper parser : java.util.List.of(JSON, bigInts)) {
                JsonNode tree = parser.readTree(body);
                // the fingerprint as it was made before: the top level's null members left out, the rest through maps
                JsonNode compared = tree.deepCopy();
                if (compared instanceof com.fasterxml.jackson.databind.node.ObjectNode object) {
                    object.properties().removeIf(member -> member.getValue().isNull());
                }
                java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
                sha.update("POST\n/accounts\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                sha.update(maps.writeValueAsBytes(maps.treeToValue(compared, Object.class)));
                assertEquals(new RequestFingerprint(sha.digest()), RequestFingerprint.of("POST", "/accounts", tree), body);
            }
        }
    }

    private static String randomJson(java.util.Random random, int depth) {
        int kind = depth == 0 ? random.nextInt(6) : random.nextInt(8);
        return switch (kind) {
            case 0 -> Integer.toString(random.nextInt(2001) - 1000);
            case 1 -> Double.toString((random.nextDouble() - 0.5) * Math.pow(10, random.nextInt(30) - 15));
            case 2 -> "\"" + (char) ('a' + random.nextInt(26)) + "\\u00" + (random.nextInt(6) + 10) + "0\"";
            case 3 -> random.nextBoolean() ? "true" : "false";
            case 4 -> "null";
            case 5 -> Long.toString(random.nextLong());
            case 6 -> {
                StringBuilder array = new StringBuilder("[");
                for (int i = random.nextInt(4); i > 0; i--) {
                    array.append(randomJson(random, depth - 1)).append(i > 1 ? "," : "");
                }
                yield array.append(']').toString();
            }
            default -> {
                StringBuilder object = new StringBuilder("{");
                int members = random.nextInt(5);
                for (int i = 0; i < members; i++) {
                    object.append('"').append("aBcDé_Z9".charAt(random.nextInt(8))).append(i).append("\":")
                            .append(randomJson(random, depth - 1)).append(i < members - 1 ? "," : "");
                }
                yield object.append('}').toString();
            }
        };
    }

    @Test
    void roundTripsThroughHex() throws Exception {
        RequestFingerprint fp = of("POST", "/accounts", "{}");
        assertEquals(64, fp.hex().length());
        assertEquals(fp, RequestFingerprint.fromHex(fp.hex()));
    }
}
