package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Checks a message against the AsyncAPI document the service serves ({@code asyncapi.yaml}, at
 * {@code /q/asyncapi}): its payload, its headers, its AMQP properties ({@code x-amqp-properties}) and its
 * Kafka key, each against the message's schema, with the document's {@code components} for references.
 * The test helpers that receive what the service publishes ({@code Broker}, {@code KafkaBroker},
 * {@code EventTap}) check every message they take, so that the document and the service cannot drift
 * apart, as {@link ServedDocument} does for HTTP answers and the OpenAPI document.
 */
public final class AsyncApiContract {
    public static final JsonNode DOCUMENT = load();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SchemaRegistry SCHEMAS = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_7);
    private static final Map<String, Schema> COMPILED = new ConcurrentHashMap<>();

    private AsyncApiContract() {
    }

    /** A RabbitMQ message the service sent or accepted, as {@code message} of {@code components.messages}. */
    public static void rabbitmq(String message, AMQP.BasicProperties properties, byte[] body) {
        Map<String, Object> amqp = new LinkedHashMap<>();
        put(amqp, "message_id", properties.getMessageId());
        put(amqp, "user_id", properties.getUserId());
        put(amqp, "correlation_id", properties.getCorrelationId());
        put(amqp, "reply_to", properties.getReplyTo());
        put(amqp, "content_type", properties.getContentType());
        put(amqp, "type", properties.getType());
        put(amqp, "delivery_mode", properties.getDeliveryMode());
        Map<String, Object> headers = new LinkedHashMap<>();
        if (properties.getHeaders() != null) {
            properties.getHeaders().forEach((name, value) -> headers.put(name, value instanceof LongString ? value.toString() : value));
        }
        assertConforms(message, null, JSON.valueToTree(headers), JSON.valueToTree(amqp), body);
    }

    /** A Kafka record the service produced or accepted, as {@code message} of {@code components.messages}. */
    public static void kafka(String message, String key, Map<String, String> headers, byte[] value) {
        assertConforms(message, key == null ? null : JSON.getNodeFactory().textNode(key), JSON.valueToTree(headers), null, value);
    }

    /** The Kafka message a record of {@code topic} is, or null for a topic the service does not produce to. */
    public static String kafkaMessageOf(String topic, Map<String, String> headers) {
        if (topic.startsWith("ledger.outcomes.")) {
            return "kafkaOutcome";
        }
        if (topic.equals("ledger.dead.commands")) {
            return "kafkaDeadLetter";
        }
        if (topic.startsWith("ledger.events") && headers.containsKey("event-type")) {
            return eventMessage("kafka", headers.get("event-type"));
        }
        return null;
    }

    /** The message of {@code broker} ({@code rabbitmq}, {@code kafka}) a command named {@code command} is: {@code transfers.create} is {@code <broker>TransferCreate}. */
    public static String commandMessage(String broker, String command) {
        return command.equals("transactions.post") ? broker + "PaymentCommand" : eventMessage(broker, command.replace("transfers.", "transfer."));
    }

    /** The message of {@code broker} ({@code rabbitmq}, {@code kafka}) an event of {@code type} is: {@code transfer.posted} is {@code <broker>TransferPosted}. */
    public static String eventMessage(String broker, String type) {
        StringBuilder name = new StringBuilder(broker);
        for (String word : type.split("\\.")) {
            name.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
        }
        return name.toString();
    }

    static void assertConforms(String message, JsonNode key, JsonNode headers, JsonNode amqp, byte[] body) {
        List<String> violations = violations(message, key, headers, amqp, body);
        if (!violations.isEmpty()) {
            throw new AssertionError("The " + message + " message disagrees with the AsyncAPI document (/q/asyncapi): "
                    + violations + "\n  headers " + headers + "\n  AMQP properties " + amqp + "\n  key " + key
                    + "\n  body " + new String(body, StandardCharsets.UTF_8));
        }
    }

    /** What of the message disagrees with the document; empty when it conforms. */
    public static List<String> violations(String message, JsonNode key, JsonNode headers, JsonNode amqp, byte[] body) {
        JsonNode declared = DOCUMENT.path("components").path("messages").path(message);
        if (declared.isMissingNode()) {
            throw new IllegalArgumentException("No message " + message + " in the AsyncAPI document");
        }
        List<String> violations = new ArrayList<>();
        check(message, "headers", declared.get("headers"), headers, violations);
        check(message, "x-amqp-properties", declared.get("x-amqp-properties"), amqp, violations);
        check(message, "bindings/kafka/key", declared.path("bindings").path("kafka").get("key"), key, violations);
        JsonNode payload = declared.get("payload");
        if (payload != null && (payload.has("$ref") || payload.has("type") || payload.has("oneOf"))) {
            try {
                check(message, "payload", payload, JSON.readTree(body), violations);
            } catch (IOException notJson) {
                violations.add("payload: not JSON (" + notJson.getMessage() + ")");
            }
        }
        return violations;
    }

    private static void check(String message, String part, JsonNode schema, JsonNode value, List<String> violations) {
        if (schema == null) {
            return;
        }
        if (value == null) {
            violations.add(part + ": missing");
            return;
        }
        Schema compiled = COMPILED.computeIfAbsent(message + "/" + part, ignored -> {
            ObjectNode root = JSON.createObjectNode();
            root.putArray("allOf").add(schema);
            root.set("components", DOCUMENT.get("components"));
            return SCHEMAS.getSchema(root);
        });
        for (Error error : compiled.validate(value)) {
            violations.add(part + ": " + error.getInstanceLocation() + " " + error.getMessage());
        }
    }

    private static void put(Map<String, Object> properties, String name, Object value) {
        if (value != null) {
            properties.put(name, value);
        }
    }

    private static JsonNode load() {
        try (InputStream in = AsyncApiContract.class.getClassLoader().getResourceAsStream("asyncapi.yaml")) {
            return new YAMLMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
