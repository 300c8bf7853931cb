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

    @Test
    void roundTripsThroughHex() throws Exception {
        RequestFingerprint fp = of("POST", "/accounts", "{}");
        assertEquals(64, fp.hex().length());
        assertEquals(fp, RequestFingerprint.fromHex(fp.hex()));
    }
}
