package dev.ledger.tracing;

import dev.ledger.outbox.EventTap;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.Broker;
import dev.ledger.testing.BrokerUsers;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.KafkaBroker;
import dev.ledger.testing.OtlpReceiver;
import dev.ledger.testing.OtlpReceiver.ReceivedSpan;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static dev.ledger.testing.LedgerApi.given;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Traces, exported over OTLP to a real receiver ({@link OtlpReceiver}): the span tree of one POST, of
 * its replay and of one command over each broker, each continuing the trace its caller started (W3C {@code traceparent}),
 * with the engine's outcome on the request's span and the trace carried on into what the service
 * publishes (the command's outcome, the event the change produced).
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class TracingTest {
    private static final Duration BOUND = Duration.ofSeconds(20);
    private static Broker dev;

    @BeforeAll
    static void connect() throws Exception {
        BrokerUsers.ensure("dev");
        dev = Broker.as("dev", BrokerUsers.PASSWORD, 0);
    }

    @AfterAll
    static void disconnect() throws Exception {
        dev.close();
    }

    /** A caller's trace: its id, its span's id and the header that carries both. */
    private record CallerTrace(String traceId, String spanId) {
        static CallerTrace start() {
            HexFormat hex = HexFormat.of();
            byte[] trace = new byte[16];
            byte[] span = new byte[8];
            ThreadLocalRandom.current().nextBytes(trace);
            ThreadLocalRandom.current().nextBytes(span);
            return new CallerTrace(hex.formatHex(trace), hex.formatHex(span));
        }

        String traceparent() {
            return "00-" + traceId + "-" + spanId + "-01";
        }
    }

    private static Response postAccount(String key, CallerTrace caller) {
        return given().header("traceparent", caller.traceparent()).contentType("application/json")
                .header("Idempotency-Key", key).body("{\"currency\":\"EUR\"}").post("/accounts");
    }

    /** The trace's spans once one matches {@code until} (spans are exported in batches, as they end). */
    private static List<ReceivedSpan> awaitTrace(String traceId, Predicate<ReceivedSpan> until) {
        return await().atMost(BOUND).until(() -> OtlpReceiver.trace(traceId), spans -> spans.stream().anyMatch(until));
    }

    private static ReceivedSpan one(List<ReceivedSpan> spans, Predicate<ReceivedSpan> which, String what) {
        List<ReceivedSpan> found = spans.stream().filter(which).toList();
        assertEquals(1, found.size(), what + " among " + describe(spans));
        return found.get(0);
    }

    private static Predicate<ReceivedSpan> kind(SpanKind kind) {
        return span -> span.kind() == kind;
    }

    /** A client span of a database: {@code redis}, or {@code postgresql} (which Quarkus' SQL tracing names {@code postgres}). */
    private static Predicate<ReceivedSpan> database(String system) {
        return span -> {
            String named = span.attributes().getOrDefault("db.system.name", span.attribute("db.system"));
            return span.kind() == SpanKind.SPAN_KIND_CLIENT && named != null
                    && (named.equals(system) || system.equals("postgresql") && named.equals("postgres"));
        };
    }

    private static Predicate<ReceivedSpan> childOf(ReceivedSpan parent) {
        return span -> span.parentSpanId().equals(parent.spanId());
    }

    private static String describe(List<ReceivedSpan> spans) {
        StringBuilder text = new StringBuilder();
        for (ReceivedSpan span : spans) {
            text.append("\n  ").append(span.kind()).append(' ').append(span.name()).append(" id=").append(span.spanId())
                    .append(" parent=").append(span.parentSpanId()).append(' ').append(span.attributes());
        }
        return text.toString();
    }

    @Test
    void aPostIsOneTraceWithItsRedisScriptItsStatementAndItsOutcome() {
        CallerTrace caller = CallerTrace.start();
        String account = postAccount(newKey(), caller).then().statusCode(201).extract().path("id");

        List<ReceivedSpan> trace = awaitTrace(caller.traceId(), span -> span.kind() == SpanKind.SPAN_KIND_SERVER);
        ReceivedSpan request = one(trace, kind(SpanKind.SPAN_KIND_SERVER), "the request's span");
        assertEquals(caller.spanId(), request.parentSpanId(), "the request continues its caller's trace");
        assertEquals("executed", request.attribute("ledger.idempotency.outcome"), describe(trace));
        assertEquals("idempotent-ledger", request.resource().get("service.name"));
        assertTrue(trace.stream().anyMatch(database("redis").and(childOf(request))), "a Redis script under the request: " + describe(trace));
        assertTrue(trace.stream().anyMatch(database("postgresql").and(childOf(request))),
                "the payment statement under the request: " + describe(trace));
        assertTrue(account != null);
        // the outcome's timer links to traces: an exemplar, in OpenMetrics (Quarkus answers it to an Accept without
        // text/plain). Not necessarily this request's: a bucket keeps an exemplar for 7 s before a newer one replaces
        // it, and other tests' requests share this application. None while tracing is off (OperatingSurfaceTest).
        String metrics = given().accept("*/*").get("/q/metrics").then().statusCode(200).extract().asString();
        assertTrue(metrics.lines().anyMatch(line -> line.startsWith("ledger_idempotency_requests_seconds_bucket{")
                        && line.contains("outcome=\"executed\"") && line.matches(".* # \\{.*trace_id=\"[0-9a-f]{32}\".*")),
                "no exemplar on the executed outcome's timer");
    }

    @Test
    void noSpanHoldsTheIdempotencyKeyTheApiKeyOrABodyValue() {
        String account = newAccount();
        String key = "secret-key-" + UUID.randomUUID();
        String reference = "confidential-" + UUID.randomUUID();
        CallerTrace caller = CallerTrace.start();
        given().header("traceparent", caller.traceparent()).contentType("application/json").header("Idempotency-Key", key)
                .body("{\"type\":\"CREDIT\",\"amount\":913579,\"sequence\":1,\"reference\":\"" + reference + "\"}")
                .post("/accounts/" + account + "/transactions").then().statusCode(201);
        List<ReceivedSpan> trace = awaitTrace(caller.traceId(), span -> span.kind() == SpanKind.SPAN_KIND_SERVER);
        assertTrue(trace.stream().anyMatch(database("redis")), "the Redis scripts were traced: " + describe(trace));
        for (ReceivedSpan span : trace) {
            for (String value : span.attributes().values()) {
                for (String secret : List.of(key, reference, ApiClient.DEV.apiKey(), "913579")) {
                    assertFalse(value.contains(secret), "span " + span.name() + " shows " + secret + ": " + span.attributes());
                }
            }
        }
    }

    @Test
    void aReplayIsATraceOfItsOwnWithTheRedisScriptAndNoStatement() {
        String key = newKey();
        postAccount(key, CallerTrace.start()).then().statusCode(201);
        CallerTrace retry = CallerTrace.start();
        postAccount(key, retry).then().statusCode(201).header("Idempotent-Replayed", "true");

        List<ReceivedSpan> trace = awaitTrace(retry.traceId(), span -> span.kind() == SpanKind.SPAN_KIND_SERVER);
        ReceivedSpan request = one(trace, kind(SpanKind.SPAN_KIND_SERVER), "the replay's span");
        assertEquals("replayed-store", request.attribute("ledger.idempotency.outcome"), describe(trace));
        assertTrue(trace.stream().anyMatch(database("redis").and(childOf(request))), "the Redis script: " + describe(trace));
        assertTrue(trace.stream().noneMatch(database("postgresql")), "a replay from Redis runs no statement: " + describe(trace));
    }

    @Test
    void aCommandContinuesItsSendersTraceThroughToItsOutcome() throws Exception {
        String account = newAccount();
        String replies = dev.replyQueue();
        CallerTrace sender = CallerTrace.start();
        String key = newKey();
        dev.publish(Broker.command(key, "dev", replies).headers(Map.of("traceparent", sender.traceparent())).build(),
                "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":700,\"sequence\":1}");
        Broker.Delivery outcome = dev.next(replies, BOUND);
        assertEquals(201, outcome.status(), outcome.body());

        assertACommandsTrace(sender, "rabbitmq", outcome.header("traceparent"));
    }

    /**
     * The trace of a command its sender started: the connector's receive span continues it, the command's
     * {@code process} span (with the engine's outcome) under that, and the Redis script, the statement and the
     * outcome's publish under the process span; the outcome carries the trace on ({@code traceparent}).
     */
    private static void assertACommandsTrace(CallerTrace sender, String system, Object outcomesTraceparent) {
        // the process span ends last, once the command is settled
        List<ReceivedSpan> trace = awaitTrace(sender.traceId(), span -> "process".equals(span.attribute("messaging.operation.type")));
        ReceivedSpan received = one(trace, kind(SpanKind.SPAN_KIND_CONSUMER).and(span -> !"process".equals(
                span.attribute("messaging.operation.type"))), "the connector's receive span");
        assertEquals(sender.spanId(), received.parentSpanId(), "the command continues its sender's trace: " + describe(trace));
        ReceivedSpan processed = one(trace, span -> "process".equals(span.attribute("messaging.operation.type")),
                "the command's process span");
        assertEquals(received.spanId(), processed.parentSpanId(), describe(trace));
        assertEquals(system, processed.attribute("messaging.system"), describe(trace));
        assertEquals("executed", processed.attribute("ledger.idempotency.outcome"), describe(trace));
        assertTrue(trace.stream().anyMatch(database("redis").and(childOf(processed))), "the Redis script in the command's trace: " + describe(trace));
        assertTrue(trace.stream().anyMatch(database("postgresql").and(childOf(processed))),
                "the statement in the command's trace: " + describe(trace));
        assertTrue(trace.stream().anyMatch(kind(SpanKind.SPAN_KIND_PRODUCER).and(childOf(processed))),
                "the outcome's publish in the command's trace: " + describe(trace));
        assertTrue(outcomesTraceparent != null && outcomesTraceparent.toString().startsWith("00-" + sender.traceId() + "-"),
                "the outcome carries the trace on: " + outcomesTraceparent);
    }

    @Test
    void aKafkaCommandContinuesItsProducersTraceThroughToItsOutcome() throws Exception {
        String account = newAccount();
        CallerTrace sender = CallerTrace.start();
        String key = newKey();
        KafkaBroker.Received outcome;
        try (KafkaProducer<byte[], byte[]> producer = KafkaBroker.producer();
             KafkaBroker.Reader outcomes = KafkaBroker.reader("ledger.outcomes.dev")) {
            producer.send(KafkaBroker.command("dev", account, "{\"accountId\":\"" + account
                    + "\",\"type\":\"CREDIT\",\"amount\":700,\"sequence\":1}", "idempotency-key", key,
                    "traceparent", sender.traceparent())).get(20, TimeUnit.SECONDS);
            outcome = outcomes.await(1, received -> key.equals(received.header("idempotency-key")), BOUND).get(0);
        }
        assertEquals(201, outcome.status(), outcome.value());
        assertACommandsTrace(sender, "kafka", outcome.header("traceparent"));
    }

    @Test
    void theEventAChangeProducedCarriesTheRequestsTrace() throws Exception {
        try (EventTap tap = EventTap.onSharedBroker()) {
            CallerTrace caller = CallerTrace.start();
            String account = postAccount(newKey(), caller).then().statusCode(201).extract().path("id");
            await().atMost(BOUND).until(() -> !tap.of(List.of(account)).isEmpty());
            EventTap.Delivery opened = tap.of(List.of(account)).get(0);
            String traceparent = opened.traceparent();
            assertTrue(traceparent != null && traceparent.startsWith("00-" + caller.traceId() + "-"),
                    "the event carries the trace of the request that produced it: " + traceparent);
            List<ReceivedSpan> trace = awaitTrace(caller.traceId(), span -> span.kind() == SpanKind.SPAN_KIND_PRODUCER);
            ReceivedSpan published = one(trace, kind(SpanKind.SPAN_KIND_PRODUCER), "the event's publish span");
            assertEquals("rabbitmq", published.attribute("messaging.system"), describe(trace));
        }
    }
}
