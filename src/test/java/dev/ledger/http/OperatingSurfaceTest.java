package dev.ledger.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.LedgerApi;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
class OperatingSurfaceTest {

    @Test
    void openApiDocumentsEveryEndpointAndTheIdempotencyContract() {
        JsonPath api = given().queryParam("format", "json").when().get("/q/openapi")
                .then().statusCode(200).extract().jsonPath();
        Map<String, Object> paths = api.getMap("paths");
        assertTrue(paths.keySet().containsAll(List.of("/accounts", "/accounts/{id}", "/accounts/{id}/transactions",
                "/accounts/{id}/transactions/{txId}")), paths.keySet().toString());

        for (String post : List.of("'/accounts'.post", "'/accounts/{id}/transactions'.post")) {
            List<Map<String, Object>> parameters = api.getList("paths." + post + ".parameters");
            Map<String, Object> key = parameters.stream().filter(p -> "Idempotency-Key".equals(p.get("name"))).findFirst()
                    .orElseThrow(() -> new AssertionError("no Idempotency-Key parameter on " + post));
            assertEquals("header", key.get("in"));
            assertEquals(true, key.get("required"));
            @SuppressWarnings("unchecked")
            Map<String, Object> schema = (Map<String, Object>) key.get("schema");
            assertNotNull(schema.get("pattern"));
            assertEquals(1, schema.get("minLength"));
            Map<String, Object> responses = api.getMap("paths." + post + ".responses");
            assertTrue(responses.keySet().containsAll(List.of("201", "400", "409", "413", "415", "422", "503")), post + responses.keySet());
            assertNotNull(api.get("paths." + post + ".responses.'201'.headers.Idempotent-Replayed"), post);
        }
        assertTrue(api.getMap("paths.'/accounts/{id}/transactions'.post.responses").containsKey("404"));
        assertTrue(api.getString("paths.'/accounts/{id}/transactions'.post.responses.'409'.description").contains("stale-sequence"));
        assertTrue(api.getString("paths.'/accounts/{id}/transactions'.post.responses.'422'.description").contains("insufficient-funds"));
        assertNotNull(api.get("components.schemas.PostTransactionRequest.properties.amount"));
        // GETs take no body, and no framework type (the Vert.x request the resource reads) is described
        assertNull(api.get("paths.'/accounts/{id}/transactions'.get.requestBody"));
        assertNull(api.get("paths.'/accounts/{id}'.get.requestBody"));
        Map<String, Object> schemas = api.getMap("components.schemas");
        assertFalse(schemas.keySet().stream().anyMatch(name -> name.contains("HttpServer") || name.contains("UriInfo")),
                schemas.keySet().toString());
    }

    @Test
    void openApiDocumentsTheApiKeyAndTheHttpLayerRefusalsOnEveryOperation() {
        JsonPath api = given().queryParam("format", "json").when().get("/q/openapi")
                .then().statusCode(200).extract().jsonPath();
        assertEquals("http", api.getString("components.securitySchemes.bearerApiKey.type"));
        assertEquals("bearer", api.getString("components.securitySchemes.bearerApiKey.scheme"));
        int operations = 0;
        for (String path : List.of("/accounts", "/accounts/{id}", "/accounts/{id}/transactions", "/accounts/{id}/transactions/{txId}")) {
            Map<String, Object> methods = api.getMap("paths.'" + path + "'");
            for (String method : methods.keySet()) {
                if (!List.of("get", "post").contains(method)) {
                    continue;
                }
                String operation = "paths.'" + path + "'." + method;
                assertTrue(api.getMap(operation + ".responses").containsKey("401"), operation);
                assertEquals(List.of(Map.of("bearerApiKey", List.of())), api.getList(operation + ".security"), operation);
                assertNotNull(api.get(operation + ".responses.'401'.headers.WWW-Authenticate"), operation);
                assertTrue(api.getMap(operation + ".responses").keySet().containsAll(List.of("406", "500", "503")), operation);
                assertNotNull(api.get(operation + ".responses.'503'.headers.Retry-After"), operation);
                Map<String, Object> responses = api.getMap(operation + ".responses");
                // the refusals of the HTTP layer, on every operation; 417 where there is a body
                assertTrue(responses.keySet().containsAll(List.of("401", "406", "414", "431")), operation + responses.keySet());
                assertEquals(method.equals("post"), responses.containsKey("417"), operation + responses.keySet());
                operations++;
            }
        }
        assertEquals(5, operations);
    }

    @Test
    void openApiDescribesProblemsAsTheServiceSendsThem() {
        JsonPath api = given().queryParam("format", "json").when().get("/q/openapi")
                .then().statusCode(200).extract().jsonPath();
        List<String> types = api.getList("components.schemas.Problem.properties.type.enum");
        assertTrue(types.contains("/problems/insufficient-funds"), types.toString());
        assertTrue(types.stream().allMatch(type -> type.matches("/problems/[a-z-]+")), types.toString());
        assertNull(api.get("components.schemas.ProblemType"));
        assertNull(api.get("components.schemas.Problem.properties.extensions"));
        assertNotNull(api.get("components.schemas.Problem.properties.balance"));
        assertNotNull(api.get("components.schemas.Problem.properties.lastSequence"));

        String post = "paths.'/accounts/{id}/transactions'.post.responses";
        assertNotNull(api.get(post + ".'409'.headers.Retry-After"));
        for (String recorded : List.of("404", "409", "422")) {
            assertNotNull(api.get(post + ".'" + recorded + "'.headers.Idempotent-Replayed"), recorded);
        }
        assertEquals(1000, (int) api.get(post + ".'422'.content.'application/problem+json'.examples.insufficient-funds.value.balance"));
        assertEquals(900, (int) api.get(post + ".'422'.content.'application/problem+json'.examples.insufficient-funds.value.available"));
        assertNotNull(api.get("components.schemas.Problem.properties.available"));
        assertNotNull(api.get("components.schemas.Problem.properties.accountId"));
        String transfer = "paths.'/transfers'.post.responses";
        assertNotNull(api.get(transfer + ".'422'.content.'application/problem+json'.examples.currency-mismatch"));
        assertNotNull(api.get(transfer + ".'422'.headers.Idempotent-Replayed"));
        assertNotNull(api.get("paths.'/transfers/{id}/post'.post.responses.'200'.headers.Preference-Applied"));
        assertTrue(api.getString("info.description").contains("24 hours"));
        assertTrue(api.getString("info.description").contains("may or may not have been applied"));
    }

    @Test
    void openApiExamplesSucceedAsGiven() {
        JsonPath api = given().queryParam("format", "json").when().get("/q/openapi")
                .then().statusCode(200).extract().jsonPath();
        Map<String, Object> open = examples(api, "OpenAccountRequest");
        Map<String, Object> credit = examples(api, "PostTransactionRequest");

        Response opened = LedgerApi.post("/accounts", LedgerApi.newKey(), toJson(open));
        String account = opened.path("id");
        assertEquals(201, opened.statusCode(), opened.asString());
        Response posted = LedgerApi.postTransaction(account, LedgerApi.newKey(), toJson(credit));
        assertEquals(201, posted.statusCode(), posted.asString());
    }

    /** The body Swagger UI fills in for a schema: each member's example. */
    private static Map<String, Object> examples(JsonPath api, String schema) {
        Map<String, Map<String, Object>> members = api.getMap("components.schemas." + schema + ".properties");
        Map<String, Object> body = new LinkedHashMap<>();
        members.forEach((member, property) -> body.put(member, property.get("example")));
        return body;
    }

    private static String toJson(Map<String, Object> body) {
        try {
            return new ObjectMapper().writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void openApiNamesEveryOperationStably() {
        JsonPath api = given().queryParam("format", "json").when().get("/q/openapi")
                .then().statusCode(200).extract().jsonPath();
        assertEquals("openAccount", api.getString("paths.'/accounts'.post.operationId"));
        assertEquals("getAccount", api.getString("paths.'/accounts/{id}'.get.operationId"));
        assertEquals("postTransaction", api.getString("paths.'/accounts/{id}/transactions'.post.operationId"));
        assertEquals("listTransactions", api.getString("paths.'/accounts/{id}/transactions'.get.operationId"));
        assertEquals("getTransaction", api.getString("paths.'/accounts/{id}/transactions/{txId}'.get.operationId"));
        assertEquals("getIdempotencyKey", api.getString("paths.'/idempotency-keys/{key}'.get.operationId"));
        assertEquals("createTransfer", api.getString("paths.'/transfers'.post.operationId"));
        assertEquals("getTransfer", api.getString("paths.'/transfers/{id}'.get.operationId"));
        assertEquals("postTransfer", api.getString("paths.'/transfers/{id}/post'.post.operationId"));
        assertEquals("voidTransfer", api.getString("paths.'/transfers/{id}/void'.post.operationId"));
        assertEquals("reverseTransfer", api.getString("paths.'/transfers/{id}/reversals'.post.operationId"));
    }

    @Test
    void swaggerUiHealthAndMetricsAnswer() {
        given().when().get("/q/swagger-ui/").then().statusCode(200).body(containsString("swagger"));
        given().when().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().when().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"))
                .body("checks.name", hasItems(containsString("PostgreSQL"), containsString("Redis")));
        // the HTTP server timer exists once a request was served, whatever ran before this test
        ApiClient.DEV.given().when().get("/accounts/" + java.util.UUID.randomUUID()).then().statusCode(404);
        given().when().get("/q/metrics").then().statusCode(200).body(containsString("http_server_requests"))
                .body(containsString("resilience4j_circuitbreaker_state{name=\"redis\",state=\"closed\"} 1.0"))
                .body(containsString("ledger_redis_commands_total"), containsString("ledger_redis_writes_total"),
                        containsString("ledger_account_reads_total"), containsString("ledger_account_read_queries_total"));
    }

    @Test
    void postMetricsNameTheirPathTemplatesNotIds() {
        String account = dev.ledger.testing.LedgerApi.newAccount();
        String key = dev.ledger.testing.LedgerApi.newKey();
        String body = dev.ledger.testing.LedgerApi.transaction("CREDIT", 5, 1);
        dev.ledger.testing.LedgerApi.postTransaction(account, key, body).then().statusCode(201);
        // the replay and the 4xx are answered by the POST route itself, before any JAX-RS resource
        dev.ledger.testing.LedgerApi.postTransaction(account, key, body).then().statusCode(201).header("Idempotent-Replayed", "true");
        dev.ledger.testing.LedgerApi.postTransaction(account, key, dev.ledger.testing.LedgerApi.transaction("CREDIT", 6, 1)).then().statusCode(422);
        String metrics = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        assertFalse(metrics.contains(account), "an account id is in /q/metrics");
        assertTrue(metrics.matches("(?s).*http_server_requests_seconds_count\\{method=\"POST\",outcome=\"SUCCESS\",status=\"201\",uri=\"/accounts/\\{id}/transactions\"}.*"), metrics);
        assertTrue(metrics.contains("status=\"422\",uri=\"/accounts/{id}/transactions\""), "no templated 422 series");
    }

    @Test
    void lookupMetricsNameThePathTemplateNotTheKey() {
        String key = LedgerApi.newKey();
        LedgerApi.openAccount(key, "EUR").then().statusCode(201);
        LedgerApi.lookup(key).then().statusCode(200);
        String unknown = LedgerApi.newKey();
        LedgerApi.lookup(unknown).then().statusCode(404);
        String metrics = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        assertFalse(metrics.contains(key) || metrics.contains(unknown), "an idempotency key is in /q/metrics");
        assertTrue(metrics.contains("status=\"200\",uri=\"/idempotency-keys/{key}\""), "no templated lookup series");
    }

    @Test
    void madeUpMethodsAddNoMetricSeries() {
        String method = "QWE" + Long.toHexString(System.nanoTime()).toUpperCase(java.util.Locale.ROOT);
        int status = given().when().request(method, "/accounts").statusCode();
        assertTrue(status >= 400 && status < 500, "answered " + status);
        String metrics = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        assertFalse(metrics.contains(method), "the made-up method is in /q/metrics");
        assertTrue(metrics.contains("method=\"OTHER\""), "no OTHER series");
    }

    @Inject
    Tracer tracer;
    @Inject
    Optional<ExemplarSampler> exemplars;

    @Test
    void tracesAreOffWhileNoOtlpEndpointIsConfigured() {
        // TracingTest (an endpoint set) sees the same code record and export spans
        Span span = tracer.spanBuilder("probe").startSpan();
        try {
            assertFalse(span.isRecording(), "a span is recorded with no OTLP endpoint configured");
        } finally {
            span.end();
        }
        assertEquals("0.0", ConfigProvider.getConfig().getValue("quarkus.otel.traces.sampler.arg", String.class));
        // nor are Quarkus' own instrumentations at work: they would build a span context per request
        assertEquals("false", ConfigProvider.getConfig().getValue("quarkus.otel.instrument.vertx-http", String.class));
        assertEquals("false", ConfigProvider.getConfig().getValue("quarkus.otel.instrument.vertx-sql-client", String.class));
        // nor the messaging connectors' instrumentation of every command and outcome (TracingTest: their spans with tracing on)
        for (String channel : List.of("mp.messaging.outgoing.dead-letters.tracing.enabled",
                "mp.messaging.incoming.kafka-commands.tracing-enabled", "mp.messaging.outgoing.kafka-outcomes.tracing-enabled")) {
            assertEquals("false", ConfigProvider.getConfig().getValue(channel, String.class), channel);
        }
        // and no timer recorded looks for a span to make an exemplar of (TracingTest: one with tracing on)
        assertTrue(exemplars.isEmpty(), "an exemplar sampler with tracing off");
    }
}
