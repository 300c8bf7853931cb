package dev.ledger.packaged;

import dev.ledger.testing.ApiClient;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.ledger.testing.LedgerApi.transaction;
import static dev.ledger.packaged.ContractIT.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Replays, black-box against the packaged application: the original answer, byte for byte, applied once. */
@QuarkusIntegrationTest
@WithTestResource(value = PackagedAppConfig.class, scope = TestResourceScope.MATCHING_RESOURCES)
class ReplayIT {
    private static final ApiClient CLIENT = PackagedAppConfig.CLIENT;

    @Test
    void replaysTheOriginalAnswerWithEveryHeader() {
        String openKey = ApiClient.newKey();
        Response opened = CLIENT.openAccount(openKey, "GBP");
        String id = opened.path("id");
        String creditKey = ApiClient.newKey();
        Response credit = CLIENT.postTransaction(id, creditKey, transaction("CREDIT", 700, 1));
        assertEquals(201, credit.statusCode(), credit.asString());

        // The same request again: member order and white space do not make it another request.
        Response creditAgain = CLIENT.postTransaction(id, creditKey, "{ \"sequence\": 1, \"amount\": 700, \"type\": \"CREDIT\" }");
        Response openAgain = CLIENT.openAccount(openKey, "GBP");
        for (Response[] pair : List.of(new Response[]{opened, openAgain}, new Response[]{credit, creditAgain})) {
            assertEquals(201, pair[1].statusCode());
            assertEquals("true", pair[1].header("Idempotent-Replayed"));
            assertEquals(pair[0].asString(), pair[1].asString());
            assertEquals(pair[0].header("Location"), pair[1].header("Location"));
            assertEquals(pair[0].contentType(), pair[1].contentType());
            assertNull(pair[0].header("Idempotent-Replayed"));
        }
        assertEquals(700, CLIENT.balance(id));
        assertEquals(1, CLIENT.entryCount(id));
    }

    @Test
    void replaysRecordedBusinessRefusalsAfterTheSituationChanged() {
        String id = CLIENT.newAccount();
        CLIENT.credit(id, 100, 5);
        String stale = ApiClient.newKey();
        String poor = ApiClient.newKey();
        String unknown = ApiClient.newKey();
        String nowhere = "00000000-0000-0000-0000-00000000beef";
        Response staleFirst = CLIENT.postTransaction(id, stale, transaction("CREDIT", 1, 5));
        Response poorFirst = CLIENT.postTransaction(id, poor, transaction("DEBIT", 1000, 6));
        Response unknownFirst = CLIENT.postTransaction(nowhere, unknown, transaction("CREDIT", 1, 1));
        assertProblem(staleFirst, 409, "stale-sequence");
        assertProblem(poorFirst, 422, "insufficient-funds");
        assertProblem(unknownFirst, 404, "account-not-found");

        // Enough money now, and a higher sequence: the recorded answers still stand.
        CLIENT.credit(id, 100_000, 7);
        for (Response[] pair : List.of(
                new Response[]{staleFirst, CLIENT.postTransaction(id, stale, transaction("CREDIT", 1, 5))},
                new Response[]{poorFirst, CLIENT.postTransaction(id, poor, transaction("DEBIT", 1000, 6))},
                new Response[]{unknownFirst, CLIENT.postTransaction(nowhere, unknown, transaction("CREDIT", 1, 1))})) {
            assertEquals(pair[0].statusCode(), pair[1].statusCode());
            assertEquals("true", pair[1].header("Idempotent-Replayed"));
            assertEquals("application/problem+json", pair[1].contentType());
            assertEquals(pair[0].asString(), pair[1].asString());
        }
        assertEquals(100_100, CLIENT.balance(id));
        assertEquals(2, CLIENT.entryCount(id));
    }

    @Test
    void treatsTheQuotedAndBareFormsAsOneKey() {
        String id = CLIENT.newAccount();
        String key = ApiClient.newKey();
        Response bare = CLIENT.postTransaction(id, key, transaction("CREDIT", 5, 1));
        Response quoted = CLIENT.postTransaction(id, "\"" + key + "\"", transaction("CREDIT", 5, 1));
        assertEquals(201, quoted.statusCode());
        assertEquals("true", quoted.header("Idempotent-Replayed"));
        assertEquals(bare.asString(), quoted.asString());
        assertEquals(5, CLIENT.balance(id));
    }

    @Test
    void rejectsAKeyReusedForAnotherRequest() {
        String id = CLIENT.newAccount();
        String key = ApiClient.newKey();
        Response original = CLIENT.postTransaction(id, key, transaction("CREDIT", 5, 1));
        Response otherBody = CLIENT.postTransaction(id, key, transaction("CREDIT", 6, 1));
        assertProblem(otherBody, 422, "idempotency-key-reused");
        assertNull(otherBody.header("Idempotent-Replayed"));
        assertProblem(CLIENT.post("/accounts", key, "{\"currency\":\"EUR\"}"), 422, "idempotency-key-reused");
        assertEquals(5, CLIENT.balance(id));
        // and the original request still replays
        Response again = CLIENT.postTransaction(id, key, transaction("CREDIT", 5, 1));
        assertEquals(original.asString(), again.asString());
        assertEquals("true", again.header("Idempotent-Replayed"));
    }

    @Test
    void scopesKeysToTheirClient() {
        String key = ApiClient.newKey();
        Response mine = CLIENT.openAccount(key, "EUR");
        Response theirs = PackagedAppConfig.OTHER_CLIENT.openAccount(key, "EUR");
        assertEquals(201, theirs.statusCode());
        assertNull(theirs.header("Idempotent-Replayed"), "another client's equal key is another key");
        assertNotEquals((String) mine.path("id"), (String) theirs.path("id"));
    }
}
