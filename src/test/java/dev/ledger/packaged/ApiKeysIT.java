package dev.ledger.packaged;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.security.ApiKeys;
import dev.ledger.testing.OtlpReceiver;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.Unauthorized;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static dev.ledger.testing.PackagedApp.sha256Hex;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * API keys in the packaged application, configured as an operator does through
 * {@code LEDGER_API_KEYS}: what stops it at start (and what it prints then), a rotation across a
 * restart, the switch {@code LEDGER_AUTH_ENABLED=false}, and that its whole log output under
 * traffic holds no raw API key, idempotency key or request body, in any field of its JSON lines; a
 * request's lines carry its trace id and, once known, its outcome. Skipped where Dev Services run.
 */
class ApiKeysIT {
    private static final String ACME_OLD = "acme-old-key-0123456789abcdef0";
    private static final String ACME_NEW = "acme-new-key-0123456789abcdef0";
    private static final String GLOBEX = "globex-key-0123456789abcdef012";
    private static final String UNKNOWN = "unknown-key-0123456789abcdef01";
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Map<String, String> keys(String value) {
        Map<String, String> environment = new HashMap<>();
        environment.put("LEDGER_API_KEYS", value);
        return environment;
    }

    @BeforeAll
    static void emptyDatabase() throws Exception {
        assumeTrue(PackagedApp.configured(), "no local servers configured (tests.it.pg-host): skipped where Dev Services run");
        PackagedApp.recreateDatabase();
    }

    @Test
    void refusesToStartWithoutAKey() throws Exception {
        // both at once: each exits at start
        List<PackagedApp> launched = new ArrayList<>();
        for (String value : new String[]{null, ""}) {
            launched.add(PackagedApp.launch(keys(value), "api-keys-it-unset-" + launched.size() + ".log"));
        }
        for (PackagedApp app : launched) {
            assertNotEquals(0, app.awaitExit(), "started without keys");
            String output = app.output();
            assertTrue(output.contains("ledger.api-keys (environment variable LEDGER_API_KEYS) is not set"), output);
            assertTrue(output.contains("ledger.auth.enabled=false"), output);
        }
    }

    @Test
    void refusesToStartWithAMalformedEntryNamingItsPositionButNoHash() throws Exception {
        String acme = "acme:" + sha256Hex(ACME_OLD);
        String[][] cases = {
                {acme + "," + GLOBEX, "2"},                                                    // a raw key instead of an entry
                {acme + ",globex:" + sha256Hex(GLOBEX).toUpperCase(), "2"},                  // upper-case hex
                {acme + ",acme:" + sha256Hex(ACME_NEW) + ",globex:" + sha256Hex(GLOBEX).substring(2), "3"}};
        // all at once: each exits at start
        List<PackagedApp> launched = new ArrayList<>();
        for (String[] c : cases) {
            launched.add(PackagedApp.launch(keys(c[0]), "api-keys-it-malformed-" + c[1] + "-" + launched.size() + ".log"));
        }
        for (int i = 0; i < cases.length; i++) {
            String[] c = cases[i];
            PackagedApp app = launched.get(i);
            assertNotEquals(0, app.awaitExit(), "started with " + c[1]);
            String output = app.output();
            assertTrue(output.contains("ledger.api-keys entry " + c[1] + " is not client-id:sha256hex"), output);
            for (String key : List.of(ACME_OLD, ACME_NEW, GLOBEX)) {
                String hash = sha256Hex(key);
                for (String secret : List.of(key, hash, hash.toUpperCase(), hash.substring(2))) {
                    assertFalse(output.contains(secret), "the output shows a key or hash:\n" + output);
                }
            }
        }
    }

    @Test
    void startsWithoutKeysWhenAuthenticationIsOff() throws Exception {
        Map<String, String> environment = keys(null);
        environment.put("LEDGER_AUTH_ENABLED", "false");
        try (PackagedApp app = PackagedApp.start(environment, "api-keys-it-auth-off.log")) {
            HttpResponse<String> opened = app.post("/accounts", null, "auth-off-" + UUID.randomUUID(), "{\"currency\":\"EUR\"}");
            assertEquals(201, opened.statusCode(), opened.body());
            assertTrue(opened.headers().firstValue("WWW-Authenticate").isEmpty(), "no key is asked for");
            String account = opened.headers().firstValue("Location").orElseThrow();
            assertEquals(200, app.get(account, null).statusCode());
            // a key, even an unknown or a malformed one, changes nothing: it is not checked
            assertEquals(200, app.get(account, UNKNOWN).statusCode());
            assertEquals(200, app.get(account, "nonsense").statusCode());
            assertTrue(app.output().contains("API-key authentication is OFF"), app.output());
            // every request is the client "default"
            try (Connection db = PackagedApp.database();
                 PreparedStatement owner = db.prepareStatement("SELECT owner FROM accounts WHERE id = ?")) {
                owner.setObject(1, UUID.fromString(account.substring(account.lastIndexOf('/') + 1)));
                try (ResultSet row = owner.executeQuery()) {
                    assertTrue(row.next(), "the account is in the database");
                    assertEquals(ApiKeys.DEFAULT_CLIENT, row.getString(1));
                }
            }
        }
    }

    @Test
    void aRemovedKeyStopsWorkingAfterARestart() throws Exception {
        String key = "rotation-" + UUID.randomUUID();
        String account;
        String firstAnswer;
        String both = "acme:" + sha256Hex(ACME_OLD) + ",acme:" + sha256Hex(ACME_NEW) + ",globex:" + sha256Hex(GLOBEX);
        try (PackagedApp app = PackagedApp.start(keys(both), "api-keys-it-rotation-1.log")) {
            HttpResponse<String> opened = app.post("/accounts", ACME_OLD, key, "{\"currency\":\"EUR\"}");
            assertEquals(201, opened.statusCode(), opened.body());
            account = opened.headers().firstValue("Location").orElseThrow();
            firstAnswer = opened.body();
            assertEquals(200, app.get(account, ACME_NEW).statusCode(), "the new key is the same client");
            HttpResponse<String> replay = app.post("/accounts", ACME_NEW, key, "{\"currency\":\"EUR\"}");
            assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
            assertEquals(firstAnswer, replay.body());
            assertEquals(404, app.get(account, GLOBEX).statusCode(), "another client");
        }
        String newOnly = "acme:" + sha256Hex(ACME_NEW) + ",globex:" + sha256Hex(GLOBEX);
        try (PackagedApp app = PackagedApp.start(keys(newOnly), "api-keys-it-rotation-2.log")) {
            HttpResponse<String> old = app.get(account, ACME_OLD);
            assertUnauthorized(old, "removed key, GET");
            assertEquals("The API key is not valid", JSON.readTree(old.body()).path("detail").asText(), old.body());
            assertUnauthorized(app.post("/accounts", ACME_OLD, "rotation-" + UUID.randomUUID(), "{\"currency\":\"EUR\"}"),
                    "removed key, POST");
            assertUnauthorized(app.post("/accounts", ACME_OLD, key, "{\"currency\":\"EUR\"}"), "removed key, POST of a recorded key");
            assertEquals(200, app.get(account, ACME_NEW).statusCode());
            // the other client, whose entry did not change, works as before
            HttpResponse<String> globex = app.post("/accounts", GLOBEX, "rotation-" + UUID.randomUUID(), "{\"currency\":\"EUR\"}");
            assertEquals(201, globex.statusCode(), globex.body());
            assertEquals(200, app.get(globex.headers().firstValue("Location").orElseThrow(), GLOBEX).statusCode());
            HttpResponse<String> replay = app.post("/accounts", ACME_NEW, key, "{\"currency\":\"EUR\"}");
            assertEquals(firstAnswer, replay.body(), "the client's recorded answers outlive its old key");
        }
    }

    /** The 401 of a key that is not (or no longer) configured, checked in full ({@link Unauthorized}). */
    private static void assertUnauthorized(HttpResponse<String> response, String what) {
        Unauthorized.assertUnauthorized(response.statusCode(), name -> response.headers().firstValue(name).orElse(null),
                response.body(), what);
    }

    /** Requests of every kind, each carrying the secrets the log must not show. */
    private static List<String> traffic(PackagedApp app, String reference) throws Exception {
        List<String> idempotencyKeys = new ArrayList<>();
        String open = "idem-open-" + UUID.randomUUID();
        idempotencyKeys.add(open);
        HttpResponse<String> opened = app.post("/accounts", ACME_NEW, open, "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        String transactions = opened.headers().firstValue("Location").orElseThrow() + "/transactions";
        String credit = "idem-credit-" + UUID.randomUUID();
        idempotencyKeys.add(credit);
        String body = "{\"type\":\"CREDIT\",\"amount\":4200,\"sequence\":1,\"reference\":\"" + reference + "\"}";
        assertEquals(201, app.post(transactions, ACME_NEW, credit, body).statusCode());
        assertEquals(201, app.post(transactions, ACME_NEW, credit, body).statusCode()); // replay
        assertEquals(422, app.post(transactions, ACME_NEW, credit, body.replace("4200", "4201")).statusCode()); // reuse
        String refused = "idem-refused-" + UUID.randomUUID();
        idempotencyKeys.add(refused);
        assertEquals(409, app.post(transactions, ACME_NEW, refused, body).statusCode()); // stale sequence, recorded
        assertEquals(404, app.post(transactions, GLOBEX, refused, body).statusCode()); // another client's account
        String invalid = "idem-invalid-" + UUID.randomUUID();
        idempotencyKeys.add(invalid);
        assertEquals(400, app.post(transactions, ACME_NEW, invalid,
                "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"" + reference + "\":\"" + reference + "\"}").statusCode());
        assertEquals(400, app.post(transactions, ACME_NEW, invalid,
                "{\"type\":\"CREDIT\",\"amount\":1,\"sequence\":2,\"reference\":\"" + reference + "\\u0000\"}").statusCode());
        String unauthorized = "idem-unauthorized-" + UUID.randomUUID();
        idempotencyKeys.add(unauthorized);
        assertEquals(401, app.post(transactions, UNKNOWN, unauthorized, body).statusCode());
        assertEquals(401, app.post("/accounts", ACME_OLD, unauthorized, "{\"currency\":\"EUR\"}").statusCode());
        assertEquals(401, app.send(app.request(transactions).header("Authorization", "Basic " + ACME_NEW).build()).statusCode());
        assertEquals(200, app.get(transactions, ACME_NEW).statusCode());
        return idempotencyKeys;
    }

    @Test
    void itsLogShowsNoApiKeyIdempotencyKeyOrBody() throws Exception {
        String keys = "acme:" + sha256Hex(ACME_NEW) + ",globex:" + sha256Hex(GLOBEX);
        String reference = "order-" + UUID.randomUUID() + "-confidential";
        List<String> secrets = new ArrayList<>(List.of(ACME_OLD, ACME_NEW, GLOBEX, UNKNOWN, reference));
        List<String> logs = new ArrayList<>();
        List<String> redisDownKeys;
        try (PackagedApp app = PackagedApp.start(keys(keys), "api-keys-it-traffic.log")) {
            secrets.addAll(traffic(app, reference));
            logs.add(app.output());
        }
        // Redis unreachable: every POST logs a warning about its key, which must name it by a hash only
        Map<String, String> redisDown = keys(keys);
        redisDown.put("QUARKUS_REDIS_HOSTS", "redis://127.0.0.1:1");
        // Traces on, by the endpoint alone: each line of a request then carries its trace id
        redisDown.put("QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", OtlpReceiver.endpoint());
        redisDown.put("QUARKUS_OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf");
        redisDown.put("QUARKUS_OTEL_BSP_SCHEDULE_DELAY", "100ms");
        // The breaker stays closed, so that each POST meets the refused port and logs (the warm-up's
        // failed calls at start would otherwise open it, and a POST through an open breaker logs nothing).
        // Set under its old name on purpose: a renamed setting is still read, and said once at start.
        redisDown.put("LEDGER_REDIS_BREAKER_REQUEST_VOLUME_THRESHOLD", "1000");
        try (PackagedApp app = PackagedApp.start(redisDown, "api-keys-it-traffic-redis-down.log", "/q/health/live")) {
            redisDownKeys = traffic(app, reference);
            secrets.addAll(redisDownKeys);
            logs.add(app.output());
        }
        String redisDownLog = logs.get(1);
        String label = IdempotentRequest.of("acme", new IdempotencyKey(redisDownKeys.get(0)), "POST", "/accounts",
                JsonNodeFactory.instance.objectNode()).logLabel();
        JsonNode reserveLine = jsonLines(redisDownLog).stream()
                .filter(line -> line.path("message").asText().contains("The idempotency store (Redis) did not answer a reserve")
                        && line.path("message").asText().contains(label))
                .findFirst().orElseThrow(() -> new AssertionError(
                        "the request path logged nothing about its keys; the scan would prove nothing:\n" + redisDownLog));
        List<JsonNode> renamed = jsonLines(redisDownLog).stream()
                .filter(line -> line.path("message").asText().startsWith("Renamed settings still in use")).toList();
        assertEquals(1, renamed.size(), "one warning at start for the renamed settings in use:\n" + redisDownLog);
        assertTrue(renamed.get(0).path("message").asText()
                        .contains("ledger.redis.breaker.request-volume-threshold (now ledger.fast-path.breaker.request-volume-threshold)"),
                renamed.get(0).toString());
        String traceId = reserveLine.path("mdc").path("traceId").asText();
        assertTrue(traceId.matches("[0-9a-f]{32}"), "a request's line carries its trace id: " + reserveLine);
        await().atMost(Duration.ofSeconds(20)).until(() -> !OtlpReceiver.trace(traceId).isEmpty());
        assertTrue(jsonLines(redisDownLog).stream().anyMatch(line -> line.path("message").asText().contains("Could not record key")
                        && Set.of("bypassed-executed", "bypassed-replayed").contains(line.path("mdc").path("outcome").asText())),
                "a line logged once the outcome was known carries it:\n" + redisDownLog);
        for (String log : logs) {
            List<JsonNode> lines = jsonLines(log);
            assertFalse(lines.isEmpty(), "the packaged application logs JSON:\n" + log);
            for (String secret : secrets) {
                assertFalse(log.contains(secret), "the log shows " + secret);
                for (JsonNode line : lines) {
                    for (String value : values(line)) {
                        assertFalse(value.contains(secret), "a JSON field of the log shows " + secret + ": " + line);
                    }
                }
            }
            assertFalse(log.contains("Bearer "), "the log shows an Authorization header");
        }
    }

    /** The log's lines that are JSON objects (the application's; the JVM's own warnings are plain text). */
    private static List<JsonNode> jsonLines(String log) {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : log.split("\n")) {
            if (line.startsWith("{")) {
                try {
                    lines.add(JSON.readTree(line));
                } catch (IOException e) {
                    throw new AssertionError("a log line that is not JSON: " + line, e);
                }
            }
        }
        return lines;
    }

    /** Every text of a JSON line, its names and values at any depth, decoded (escapes undone). */
    private static List<String> values(JsonNode node) {
        List<String> values = new ArrayList<>();
        if (node.isContainerNode()) {
            node.fieldNames().forEachRemaining(values::add);
            node.elements().forEachRemaining(child -> values.addAll(values(child)));
        } else {
            values.add(node.asText());
        }
        return values;
    }
}
