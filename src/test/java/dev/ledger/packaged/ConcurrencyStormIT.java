package dev.ledger.packaged;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.PaymentLoad.Answer;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.List;

import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A storm of identical requests, all sent at one moment (a start gate, no sleeps), against the
 * packaged application: one is applied, every other one gets that answer or 409 with Retry-After.
 */
@QuarkusIntegrationTest
@WithTestResource(value = PackagedAppConfig.class, scope = TestResourceScope.MATCHING_RESOURCES)
class ConcurrencyStormIT {
    static final int STORM = 30;
    private static final ApiClient CLIENT = PackagedAppConfig.CLIENT;

    @Test
    void appliesAStormOfOneTransactionOnce() throws Exception {
        String id = CLIENT.newAccount();
        String key = ApiClient.newKey();
        String body = transaction("CREDIT", 4242, 1);

        List<Answer> answers = storm().burst("/accounts/" + id + "/transactions",
                Collections.nCopies(STORM, new String[]{key, body}));

        String original = assertOneOriginalAndTheRestReplaysOrInProgress(answers);
        assertEquals(4242, CLIENT.balance(id));
        assertEquals(1, CLIENT.entryCount(id));
        // Once the storm is over, the key answers with the original from then on.
        Response after = CLIENT.postTransaction(id, key, body);
        assertEquals(original, after.asString());
        assertEquals("true", after.header("Idempotent-Replayed"));
    }

    @Test
    void opensOneAccountForAStormOfOneOpen() throws Exception {
        String key = ApiClient.newKey();

        List<Answer> answers = storm().burst("/accounts",
                Collections.nCopies(STORM, new String[]{key, "{\"currency\":\"NOK\"}"}));

        String original = assertOneOriginalAndTheRestReplaysOrInProgress(answers);
        Response after = CLIENT.openAccount(key, "NOK");
        assertEquals(original, after.asString(), "the one account opened is the one every replay names");
    }

    /** Bursts as {@link #CLIENT} to the packaged application. */
    static PaymentLoad storm() throws Exception {
        return new PaymentLoad("storm", CLIENT, List.of(PackagedAppConfig.baseUrl().toURI()));
    }

    /** Answers the original's body. */
    static String assertOneOriginalAndTheRestReplaysOrInProgress(List<Answer> answers) {
        assertEquals(STORM, answers.size());
        return PaymentLoad.assertOneOriginalAndTheRestReplaysOrInProgress(answers);
    }
}
