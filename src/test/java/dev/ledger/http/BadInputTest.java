package dev.ledger.http;

import dev.ledger.testing.ApiClient;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.UUID;
import java.util.function.UnaryOperator;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.entryCount;
import static dev.ledger.testing.LedgerApi.given;
import static dev.ledger.testing.LedgerApi.lastSequence;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every class of bad input gets a 4xx problem naming what is wrong, never a 500, never a change
 * of data, and never a recorded key: the same key then works for a valid request.
 */
@QuarkusTest
class BadInputTest {
    @TestHTTPResource("/")
    URL base;

    /** Sends a bad body with a fresh key and checks the whole promise; answers the problem. */
    private Response rejects(int status, String slug, ContentType type, byte[] body) {
        return rejects(status, slug, type, request -> body == null ? request : request.body(body));
    }

    private Response rejects(int status, String slug, ContentType type, UnaryOperator<RequestSpecification> withBody) {
        String account = newAccount();
        credit(account, 500, 1);
        String key = newKey();
        var request = given().header("Idempotency-Key", key);
        if (type != null) {
            request = request.contentType(type);
        }
        request = withBody.apply(request);
        Response response = request.when().post("/accounts/" + account + "/transactions").andReturn();
        assertEquals(status, response.statusCode(), response.asString());
        assertTrue(response.contentType().startsWith("application/problem+json"), response.contentType());
        assertEquals("/problems/" + slug, response.path("type"));
        assertEquals(status, (int) response.path("status"));
        assertFalse(response.asString().matches("(?s).*(Exception|at [a-z]+\\.|SQL|org\\.|io\\.|java\\.|com\\.|`|Feature|Constraints).*"),
                "internals leaked: " + response.asString());
        // nothing changed
        assertEquals(500, balance(account));
        assertEquals(1, lastSequence(account));
        assertEquals(1, entryCount(account));
        // nothing recorded: the key is free for a valid request
        Response valid = postTransaction(account, key, transaction("CREDIT", 1, 2));
        assertEquals(201, valid.statusCode());
        assertNull(valid.header("Idempotent-Replayed"));
        return response;
    }

    private Response rejects(String body) {
        return rejects(400, "invalid-request", ContentType.JSON, body.getBytes(StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{", "{\"type\":\"CREDIT\",}", "nul", "{\"type\":\"CREDIT\" \"amount\":1}", "[]", "\"x\"", "42",
            "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2} {}", "{'type':'CREDIT'}",
            "{\"type\":\"CREDIT\",\"amount\":NaN,\"sequence\":2}", "{\"type\":\"CREDIT\", /* c */ \"amount\":1,\"sequence\":2}"})
    void malformedJson(String body) {
        rejects(body);
    }

    @Test
    void invalidUtf8() {
        byte[] body = "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"\u0000\"}".getBytes(StandardCharsets.UTF_8);
        byte[] broken = new byte[body.length];
        System.arraycopy(body, 0, broken, 0, body.length);
        broken[body.length - 3] = (byte) 0xC3; // a lead byte with no continuation
        rejects(400, "invalid-request", ContentType.JSON, broken);
    }

    /** RFC 3629 forbids overlong forms (C0 AF is '/' in two bytes), encoded surrogates and code points past U+10FFFF. */
    @ParameterizedTest
    @ValueSource(strings = {"C0AF", "C1BF", "E080AF", "F08282AC", "EDA080", "F4908080", "F5808080"})
    void illFormedUtf8IsRefusedNotDecoded(String hex) {
        byte[] prefix = "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"a".getBytes(StandardCharsets.UTF_8);
        byte[] bad = HexFormat.of().parseHex(hex);
        byte[] suffix = "\"}".getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[prefix.length + bad.length + suffix.length];
        System.arraycopy(prefix, 0, body, 0, prefix.length);
        System.arraycopy(bad, 0, body, prefix.length, bad.length);
        System.arraycopy(suffix, 0, body, prefix.length + bad.length, suffix.length);
        Response response = rejects(400, "invalid-request", ContentType.JSON, body);
        assertTrue(response.<String>path("detail").contains("not valid UTF-8"), response.asString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"100\"", "100.0", "1e2", "1.5", "true", "null", "[100]", "{\"v\":100}"})
    void amountOfTheWrongJsonType(String amount) {
        Response response = rejects("{\"type\":\"CREDIT\",\"amount\":" + amount + ",\"sequence\":2}");
        assertTrue(response.<String>path("detail").contains("amount"), response.asString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"2\"", "2.0", "false", "null"})
    void sequenceOfTheWrongJsonType(String sequence) {
        rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":" + sequence + "}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "1000000000000001", "9223372036854775807", "9223372036854775808",
            "-9223372036854775809", "123456789012345678901234567890"})
    void amountOutOfRange(String amount) {
        rejects("{\"type\":\"CREDIT\",\"amount\":" + amount + ",\"sequence\":2}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-5", "9223372036854775808", "18446744073709551616"})
    void sequenceOutOfRange(String sequence) {
        rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":" + sequence + "}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"debit\"", "\"REFUND\"", "\"\"", "1", "null"})
    void unknownType(String type) {
        rejects("{\"type\":" + type + ",\"amount\":1,\"sequence\":2}");
    }

    @Test
    void missingMembers() {
        rejects("{\"amount\":1,\"sequence\":2}");
        rejects("{\"type\":\"CREDIT\",\"sequence\":2}");
        rejects("{\"type\":\"CREDIT\",\"amount\":1}");
        rejects("{}");
    }

    @Test
    void unknownMemberIsNamed() {
        Response response = rejects("{\"type\":\"CREDIT\",\"ammount\":1,\"amount\":1,\"sequence\":2}");
        assertTrue(response.<String>path("detail").contains("ammount"), response.asString());
        rejects("{\"type\":\"CREDIT\",\"amount\":1,\"amount\":2,\"sequence\":2}"); // duplicate member
    }

    @Test
    void badReferences() {
        rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"" + "r".repeat(256) + "\"}");
        rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":42}");
        rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"nul\\u0000here\"}");
        rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"lone \\ud800 surrogate\"}");
        String account = newAccount();
        Response ok = postTransaction(account, newKey(),
                "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":1,\"reference\":\"" + "\uD83D\uDCB6".repeat(255) + "\"}");
        assertEquals(201, ok.statusCode(), "255 characters, even outside the BMP, fit");
    }

    @Test
    void deeplyNestedJson() {
        Response response = rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":" + "[".repeat(5000) + "]".repeat(5000) + "}");
        assertTrue(response.<String>path("detail").contains("nests deeper than 32 levels"), response.asString());
    }

    @Test
    void contentAfterTheObjectIsNamedInPlainWords() {
        Response response = rejects("{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2}\n{}");
        assertEquals("The request body has content after its JSON object (line 2, column 1)", response.path("detail"));
    }

    @Test
    void emptyBody() {
        rejects(400, "invalid-request", ContentType.JSON, new byte[0]);
    }

    @Test
    void bodyOverTheLimit() {
        String big = "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"" + "x".repeat(70_000) + "\"}";
        rejects(413, "payload-too-large", ContentType.JSON, big.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void bodyOverTheHttpLimitIsAProblemToo() {
        // 1.5 MiB declared: refused before it reaches the resource (DeclaredBodyLimit), where the HTTP
        // layer's own limit (quarkus.http.limits.max-body-size=1M) would answer an empty 413; the
        // body is read and dropped, so the connection stays open
        String huge = "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"" + "x".repeat(3 << 19) + "\"}";
        Response response = rejects(413, "payload-too-large", ContentType.JSON, huge.getBytes(StandardCharsets.UTF_8));
        assertNull(response.header("Connection"));
    }

    @Test
    void aHugeDeclaredBodyIsRefusedUnreadAndTheConnectionClosed() throws Exception {
        String account = newAccount();
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("POST /accounts/" + account + "/transactions HTTP/1.1\r\nHost: localhost\r\n"
                    + "Authorization: " + ApiClient.DEV.authorization() + "\r\nIdempotency-Key: " + newKey()
                    + "\r\nContent-Type: application/json\r\nContent-Length: 10737418240\r\n\r\n{\"type\":")
                    .getBytes(StandardCharsets.ISO_8859_1));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8); // to the close
            assertTrue(answer.startsWith("HTTP/1.1 413 "), answer);
            assertTrue(answer.toLowerCase(java.util.Locale.ROOT).contains("connection: close"), answer);
            assertTrue(answer.contains("\"type\":\"/problems/payload-too-large\""), answer);
        }
        assertEquals(0, balance(account));
    }

    @Test
    void anExpectationOtherThanContinueIsAProblem() {
        rejects(417, "expectation-failed", ContentType.JSON,
                request -> request.header("Expect", "payment-approved").body(transaction("CREDIT", 1, 2)));
    }

    /** Posts a credit on a fresh account with its body chunked (no Content-Length); checks nothing was applied or reserved. */
    private String rejectsChunked(int status, String slug, String body) throws Exception {
        String account = newAccount();
        String key = newKey();
        String detail;
        try (RawHttp http = new RawHttp(base)) {
            http.send("POST /accounts/" + account + "/transactions HTTP/1.1\r\nHost: localhost\r\nAuthorization: "
                    + ApiClient.DEV.authorization() + "\r\nIdempotency-Key: " + key + "\r\nContent-Type: application/json"
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n" + RawHttp.chunked(body, 8192));
            detail = http.read().assertProblem(status, slug);
        }
        assertEquals(0, balance(account));
        Response valid = postTransaction(account, key, transaction("CREDIT", 1, 2));
        assertEquals(201, valid.statusCode());
        assertNull(valid.header("Idempotent-Replayed"));
        return detail;
    }

    @Test
    void chunkedBodyOverTheLimit() throws Exception {
        // no Content-Length: the body is counted as it is read, and the resource answers the problem
        String big = "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"" + "x".repeat(70_000) + "\"}";
        String detail = rejectsChunked(413, "payload-too-large", big);
        assertTrue(detail.contains("is " + big.length() + " bytes; at most 65536"), detail);
    }

    @Test
    void chunkedBodyOverTheHttpLimitIsAProblemToo() throws Exception {
        // past quarkus.http.limits.max-body-size (1M) the body handler fails the request with a bare 413,
        // which dev.ledger.http.HttpLayerFailures answers as the problem
        String huge = "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"" + "x".repeat(3 << 19) + "\"}";
        String detail = rejectsChunked(413, "payload-too-large", huge);
        assertTrue(detail.contains("larger than the 65536"), detail);
    }

    @Test
    void wrongOrMissingContentType() {
        byte[] valid = transaction("CREDIT", 1, 2).getBytes(StandardCharsets.UTF_8);
        rejects(415, "unsupported-media-type", ContentType.TEXT, valid);
        rejects(415, "unsupported-media-type", ContentType.XML, valid);
        rejects(415, "unsupported-media-type", null, valid);
    }

    /** RFC 9110 (5.3): two Content-Type lines are the list of both, which is not application/json, whichever comes first. */
    @Test
    void aContentTypeSentTwiceIsRefused() throws Exception {
        String account = newAccount();
        String key = newKey();
        try (RawHttp http = new RawHttp(base)) {
            http.send(RawHttp.credit("/accounts/" + account + "/transactions", key, "Content-Type: text/plain\r\n"));
            http.read().assertProblem(415, "unsupported-media-type");
        }
        assertEquals(0, balance(account));
        Response valid = postTransaction(account, key, transaction("CREDIT", 5, 1));
        assertEquals(201, valid.statusCode());
        assertNull(valid.header("Idempotent-Replayed"));
    }

    /** RFC 9110: parameters = *( OWS ";" OWS [ parameter ] ), so white space may stand on either side of ';'. */
    @ParameterizedTest
    @ValueSource(strings = {"application/json; charset=utf-8", "application/json ; charset=UTF-8",
            "application/json\t;charset=utf-8", "APPLICATION/JSON;charset=utf-8"})
    void aCharsetParameterOfUtf8IsFine(String contentType) {
        String account = newAccount();
        given().header("Idempotency-Key", newKey()).contentType(contentType)
                .body(transaction("CREDIT", 1, 1)).when().post("/accounts/" + account + "/transactions")
                .then().statusCode(201);
    }

    @Test
    void missingOrMalformedIdempotencyKey() {
        String account = newAccount();
        Response missing = given().contentType(ContentType.JSON).body(transaction("CREDIT", 1, 1))
                .when().post("/accounts/" + account + "/transactions").andReturn();
        assertEquals(400, missing.statusCode());
        assertEquals("/problems/idempotency-key-missing", missing.path("type"));
        for (String bad : new String[]{"", "a b", "a\"b", "k".repeat(256), "\"open"}) {
            Response response = postTransaction(account, bad, transaction("CREDIT", 1, 1));
            assertEquals(400, response.statusCode(), bad);
            assertEquals("/problems/idempotency-key-invalid", response.path("type"));
        }
        Response missingOnOpen = given().contentType(ContentType.JSON).body("{\"currency\":\"EUR\"}")
                .when().post("/accounts").andReturn();
        assertEquals("/problems/idempotency-key-missing", missingOnOpen.path("type"));
        assertEquals(0, balance(account));
        assertEquals(0, entryCount(account));
    }

    @Test
    void anInvalidHeaderCharacterIsRefusedBeforeAnythingRuns() throws Exception {
        // Vert.x validates header values as Netty's decoder reads them; the decoder marks the request failed
        // and Vert.x answers it with its default invalid request handler, before any handler of the
        // application: a bare 400 that Quarkus gives no way to replace (docs/api.md, "Refused below the
        // application"). What the test can hold: a 400, the connection closed (the application's own 400
        // would keep it), nothing applied.
        String account = newAccount();
        try (RawHttp http = new RawHttp(base)) {
            http.send(RawHttp.credit("/accounts/" + account + "/transactions", "k\u0001" + newKey(), ""));
            assertEquals(400, http.read().status());
            assertTrue(http.closedByServer());
        }
        assertEquals(0, balance(account));
    }

    @Test
    void aRequestTargetThatIsNoUriIsRefusedBeforeAnythingRuns() throws Exception {
        // Quarkus' root request handler (VertxHttpRecorder) answers a target java.net.URI cannot parse ('|' is
        // not allowed in a URI) with a bare 400 before the router sees the request; only the JVM property
        // vertx.disableURIValidation, which Quarkus marks as not for production, turns that off
        // (docs/api.md, "Refused below the application")
        String account = newAccount();
        try (RawHttp http = new RawHttp(base)) {
            http.send(RawHttp.credit("/accounts/" + account + "/transactions?ref=a|b", newKey(), ""));
            assertEquals(400, http.read().status());
        }
        assertEquals(0, balance(account));
    }

    @Test
    void unknownPathsAndMethodsAreProblems() {
        given().when().get("/nowhere").then().statusCode(404).contentType("application/problem+json");
        given().when().delete("/accounts").then().statusCode(405).contentType("application/problem+json")
                .header("Allow", "POST");
        given().when().get("/accounts").then().statusCode(405).header("Allow", "POST");
        given().when().put("/accounts/" + UUID.randomUUID() + "/transactions").then().statusCode(405)
                .contentType("application/problem+json").header("Allow", "GET, HEAD, POST");
        // paths that only read: Quarkus REST alone would answer these without Allow
        given().when().post("/accounts/" + UUID.randomUUID()).then().statusCode(405)
                .contentType("application/problem+json").header("Allow", "GET, HEAD");
        given().when().delete("/accounts/" + UUID.randomUUID() + "/transactions/" + UUID.randomUUID()).then()
                .statusCode(405).contentType("application/problem+json").header("Allow", "GET, HEAD");
        given().when().post("/idempotency-keys/some-key").then().statusCode(405)
                .contentType("application/problem+json").header("Allow", "GET, HEAD");
    }
}
