package dev.ledger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.AsyncApiContract;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The checker the broker tests rely on: the document's own examples pass, and what breaks it is caught. */
class AsyncApiContractTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TRANSACTION = """
            {"id":"9a1e4c7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c","accountId":"3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01",\
            "type":"DEBIT","amount":1250,"sequence":17,"reference":"order-8812","balanceAfter":8750,\
            "createdAt":"2026-11-21T10:00:01Z"}""";

    @Test
    void everyExampleConformsToItsMessage() throws Exception {
        int examples = 0;
        var messages = AsyncApiContract.DOCUMENT.path("components").path("messages").fields();
        while (messages.hasNext()) {
            var message = messages.next();
            for (JsonNode example : message.getValue().path("examples")) {
                JsonNode headers = example.has("headers") ? example.get("headers") : null;
                List<String> violations = AsyncApiContract.violations(message.getKey(), null, headers, null,
                        JSON.writeValueAsBytes(example.get("payload")));
                // an example shows the payload and the headers; properties and the key are not part of it
                violations.removeIf(violation -> violation.endsWith(": missing"));
                assertEquals(List.of(), violations, message.getKey() + " example " + example.path("name").asText());
                examples++;
            }
        }
        assertTrue(examples >= 2, "examples checked: " + examples);
    }

    @Test
    void aKafkaOutcomeAsTheServiceProducesItConformsAndABrokenOneDoesNot() {
        Map<String, String> headers = Map.of("ledger-status", "201", "content-type", "application/json",
                "idempotency-key", "order-8812", "correlation-id", "order-8812");
        assertEquals(List.of(), AsyncApiContract.violations("kafkaOutcome", JSON.getNodeFactory().textNode("3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01"),
                JSON.valueToTree(headers), null, TRANSACTION.getBytes(StandardCharsets.UTF_8)));

        assertFalse(AsyncApiContract.violations("kafkaOutcome", JSON.getNodeFactory().textNode("k"),
                JSON.valueToTree(Map.of("content-type", "application/json")), null, TRANSACTION.getBytes(StandardCharsets.UTF_8)).isEmpty(),
                "ledger-status missing");
        assertFalse(AsyncApiContract.violations("kafkaOutcome", JSON.getNodeFactory().textNode("k"), JSON.valueToTree(headers), null,
                TRANSACTION.replace("1250", "\"1250\"").getBytes(StandardCharsets.UTF_8)).isEmpty(), "amount as a string");
        assertFalse(AsyncApiContract.violations("kafkaOutcome", JSON.getNodeFactory().textNode("k"), JSON.valueToTree(headers), null,
                TRANSACTION.replace("\"type\":\"DEBIT\",", "\"type\":\"DEBIT\",\"fee\":1,").getBytes(StandardCharsets.UTF_8)).isEmpty(),
                "a member the document does not have");
    }

    @Test
    void anEventMustCarryItsEnvelopeAndTheRightData() {
        String event = "{\"eventId\":\"6b1f4c7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c\",\"type\":\"transaction.applied\","
                + "\"occurredAt\":\"2026-11-21T10:00:01Z\",\"client\":\"acme\",\"accountId\":\"3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01\","
                + "\"data\":" + TRANSACTION + "}";
        Map<String, String> headers = Map.of("event-type", "transaction.applied", "event-id", "6b1f4c7b-2d3f-4e5a-8b6c-7d8e9f0a1b2c",
                "content-type", "application/json");
        JsonNode key = JSON.getNodeFactory().textNode("3f0c6f2e-8a4b-4c1d-9e7f-2b5a6c8d9e01");
        assertEquals(List.of(), AsyncApiContract.violations("kafkaTransactionApplied", key, JSON.valueToTree(headers), null,
                event.getBytes(StandardCharsets.UTF_8)));
        assertFalse(AsyncApiContract.violations("kafkaAccountOpened", key, JSON.valueToTree(headers), null,
                event.getBytes(StandardCharsets.UTF_8)).isEmpty(), "a transaction is not an account.opened");
        assertFalse(AsyncApiContract.violations("kafkaTransactionApplied", key, JSON.valueToTree(headers), null,
                event.replace("\"client\":\"acme\",", "").getBytes(StandardCharsets.UTF_8)).isEmpty(), "client missing");
    }
}
