package dev.ledger.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ledger.testing.AsyncApiContract;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The AsyncAPI document is served beside the OpenAPI one, with its page, without a key; and the shapes the
 * two documents share (a transaction, an account, a payment's members, the problem types) agree.
 */
@QuarkusTest
class MessageDocumentTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void servesTheDocumentAsYamlAndJsonAndAPageThatShowsIt() throws Exception {
        byte[] file;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("asyncapi.yaml")) {
            file = in.readAllBytes();
        }
        Response yaml = given().when().get("/q/asyncapi");
        assertEquals(200, yaml.statusCode());
        assertTrue(yaml.contentType().startsWith("application/yaml"), yaml.contentType());
        assertArrayEquals(file, yaml.asByteArray());

        Response json = given().when().get("/q/asyncapi?format=json");
        assertEquals(200, json.statusCode());
        assertTrue(json.contentType().startsWith("application/json"), json.contentType());
        assertEquals(new YAMLMapper().readTree(file), JSON.readTree(json.asByteArray()));

        Response page = given().when().get("/q/asyncapi-ui");
        assertEquals(200, page.statusCode());
        assertTrue(page.contentType().startsWith("text/html"), page.contentType());
        assertTrue(page.asString().contains("fetch('asyncapi?format=json')"), "the page reads the served document");

        JsonNode openApi = JSON.readTree(given().when().get("/q/openapi?format=json").asByteArray());
        assertFalse(openApi.path("paths").has("/q/asyncapi"), "the HTTP API's document does not list it");
    }

    @Test
    void theShapesBothDocumentsDescribeAgree() throws Exception {
        JsonNode openApi = JSON.readTree(given().when().get("/q/openapi?format=json").asByteArray()).path("components").path("schemas");
        JsonNode asyncApi = AsyncApiContract.DOCUMENT.path("components").path("schemas");
        for (String shape : List.of("Transaction", "Account", "Transfer")) {
            assertEquals(names(openApi.path(shape).path("properties")), names(asyncApi.path(shape).path("properties")), shape);
        }
        Set<String> command = names(openApi.path("PostTransactionRequest").path("properties"));
        command.add("accountId");
        assertEquals(command, names(asyncApi.path("PaymentCommand").path("properties")), "a command is a POST's body and its account");
        Set<String> required = values(openApi.path("PostTransactionRequest").path("required"));
        required.add("accountId");
        assertEquals(required, values(asyncApi.path("PaymentCommand").path("required")));
        Set<String> types = values(openApi.path("Problem").path("properties").path("type").path("enum"));
        for (String slug : values(asyncApi.path("ProblemSlug").path("enum"))) {
            assertTrue(types.contains("/problems/" + slug), "a dead letter's reason is a problem type: " + slug);
        }
    }

    private static Set<String> names(JsonNode object) {
        Set<String> names = new TreeSet<>();
        object.fieldNames().forEachRemaining(names::add);
        assertFalse(names.isEmpty(), "no properties");
        return names;
    }

    private static Set<String> values(JsonNode array) {
        List<String> list = new ArrayList<>();
        array.forEach(value -> list.add(value.asText()));
        assertFalse(list.isEmpty(), "empty");
        return new TreeSet<>(list);
    }
}
