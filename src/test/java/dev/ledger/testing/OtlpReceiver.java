package dev.ledger.testing;

import com.google.protobuf.InvalidProtocolBufferException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.zip.GZIPInputStream;

/**
 * A real OTLP/HTTP trace receiver for the tests: a JDK HTTP server on a free loopback port that takes the
 * service's {@code POST /v1/traces} (protobuf, gzip or not) as a collector does, and answers 200. The
 * service under test exports to it; the test reads back every span received.
 *
 * <p>One receiver per test JVM. A {@code @QuarkusTest} loads test classes in more than one class loader
 * (the profile's and the test's), so the receiver is found by its port, kept in a system property, and
 * read over HTTP ({@code GET /received}): the concatenation of every request received, which is itself
 * one {@link ExportTraceServiceRequest} (protobuf merges repeated fields).
 */
public final class OtlpReceiver {
    private static final String PORT_PROPERTY = "tests.otlp-receiver.port";
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    /** A received span, its ids in lower-case hex ({@code parentSpanId} empty for a root). */
    public record ReceivedSpan(String traceId, String spanId, String parentSpanId, String name, Span.SpanKind kind,
                               Map<String, String> attributes, Map<String, String> resource) {
        public String attribute(String key) {
            return attributes.get(key);
        }
    }

    private OtlpReceiver() {
    }

    /** The OTLP/HTTP base endpoint of this JVM's receiver ({@code http://127.0.0.1:PORT}), started at the first call. */
    public static synchronized String endpoint() {
        String port = System.getProperty(PORT_PROPERTY);
        if (port == null) {
            port = Integer.toString(start());
            System.setProperty(PORT_PROPERTY, port);
        }
        return "http://127.0.0.1:" + port;
    }

    /** Every span received so far, in arrival order. */
    public static List<ReceivedSpan> spans() {
        try {
            HttpResponse<byte[]> received = CLIENT.send(HttpRequest.newBuilder(URI.create(endpoint() + "/received")).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            List<ReceivedSpan> spans = new ArrayList<>();
            for (ResourceSpans resourceSpans : ExportTraceServiceRequest.parseFrom(received.body()).getResourceSpansList()) {
                Map<String, String> resource = values(resourceSpans.getResource().getAttributesList());
                for (ScopeSpans scope : resourceSpans.getScopeSpansList()) {
                    for (Span span : scope.getSpansList()) {
                        spans.add(new ReceivedSpan(hex(span.getTraceId().toByteArray()), hex(span.getSpanId().toByteArray()),
                                hex(span.getParentSpanId().toByteArray()), span.getName(), span.getKind(),
                                values(span.getAttributesList()), resource));
                    }
                }
            }
            return spans;
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("the receiver holds what is not OTLP", e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The spans of one trace. */
    public static List<ReceivedSpan> trace(String traceId) {
        return spans().stream().filter(span -> span.traceId().equals(traceId)).toList();
    }

    private static int start() {
        ByteArrayOutputStream received = new ByteArrayOutputStream();
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/v1/traces", exchange -> {
                byte[] body = body(exchange);
                ExportTraceServiceRequest.parseFrom(body); // refuses what a collector would refuse
                synchronized (received) {
                    received.writeBytes(body);
                }
                exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            });
            server.createContext("/received", exchange -> {
                byte[] all;
                synchronized (received) {
                    all = received.toByteArray();
                }
                exchange.sendResponseHeaders(200, all.length == 0 ? -1 : all.length);
                exchange.getResponseBody().write(all);
                exchange.close();
            });
            server.setExecutor(Executors.newSingleThreadExecutor(task -> {
                Thread thread = new Thread(task, "otlp-receiver");
                thread.setDaemon(true);
                return thread;
            }));
            server.start();
            return server.getAddress().getPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the OTLP receiver", e);
        }
    }

    private static byte[] body(HttpExchange exchange) throws IOException {
        boolean gzip = "gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"));
        try (InputStream in = gzip ? new GZIPInputStream(exchange.getRequestBody()) : exchange.getRequestBody()) {
            return in.readAllBytes();
        }
    }

    private static Map<String, String> values(List<KeyValue> attributes) {
        Map<String, String> values = new LinkedHashMap<>();
        for (KeyValue attribute : attributes) {
            var value = attribute.getValue();
            values.put(attribute.getKey(), switch (value.getValueCase()) {
                case STRING_VALUE -> value.getStringValue();
                case INT_VALUE -> Long.toString(value.getIntValue());
                case BOOL_VALUE -> Boolean.toString(value.getBoolValue());
                case DOUBLE_VALUE -> Double.toString(value.getDoubleValue());
                default -> value.toString();
            });
        }
        return values;
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
