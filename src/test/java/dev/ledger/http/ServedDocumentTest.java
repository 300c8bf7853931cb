package dev.ledger.http;

import com.atlassian.oai.validator.restassured.OpenApiValidationFilter;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.testing.LedgerApi;
import dev.ledger.testing.ServedDocument;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Test;

import java.util.UUID;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The check that keeps the OpenAPI document true: every answer the tests receive is validated
 * against the served document ({@link ServedDocument}). Shown here to be installed, and to fail a
 * test when an answer and the document disagree (the document edited to drift from the service).
 */
@QuarkusTest
class ServedDocumentTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void validatesEveryAnswerOfTheSuite() {
        assertTrue(RestAssured.filters().contains(ServedDocument.INSTANCE), RestAssured.filters().toString());
    }

    @Test
    void failsAnAnswerWithAMemberTheDocumentDoesNotDescribe() throws Exception {
        String account = LedgerApi.newAccount();
        OpenApiValidationFilter drifted = drifted(api -> ((ObjectNode) api.at("/components/schemas/Account/properties"))
                .remove("balance"));

        RuntimeException failure = assertThrows(OpenApiValidationFilter.OpenApiValidationException.class,
                () -> LedgerApi.given().filter(drifted).get("/accounts/" + account));
        assertTrue(failure.getMessage().contains("balance"), failure.getMessage());
    }

    @Test
    void failsAnAnswerWhoseStatusTheDocumentDoesNotList() throws Exception {
        OpenApiValidationFilter drifted = drifted(api -> ((ObjectNode) api.at("/paths/~1accounts~1{id}/get/responses"))
                .remove("404"));

        RuntimeException failure = assertThrows(OpenApiValidationFilter.OpenApiValidationException.class,
                () -> LedgerApi.given().filter(drifted).get("/accounts/" + UUID.randomUUID()));
        assertTrue(failure.getMessage().contains("404"), failure.getMessage());
    }

    @Test
    void passesTheAnswersTheDocumentDescribes() throws Exception {
        OpenApiValidationFilter served = drifted(api -> {
        });
        assertEquals(404, LedgerApi.given().filter(served).get("/accounts/" + UUID.randomUUID()).statusCode());
    }

    /** A validator of the served document after {@code edit}. */
    private static OpenApiValidationFilter drifted(Consumer<ObjectNode> edit) throws Exception {
        ObjectNode api = (ObjectNode) JSON.readTree(ServedDocument.fetch(RestAssured.baseURI + ":" + RestAssured.port));
        edit.accept(api);
        return ServedDocument.validatorFor(JSON.writeValueAsString(api));
    }
}
