package dev.ledger.packaged;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.PaymentLoad.Answer;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.List;

import static dev.ledger.testing.LedgerApi.transaction;
import static dev.ledger.packaged.ContractIT.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis forgets (flush, restart, failover): Postgres is the backstop. Black-box against the packaged
 * application; the flush is {@code FLUSHDB} of the Redis database the application was given, the
 * tests' own ({@link RedisDatabase}).
 */
@QuarkusIntegrationTest
@WithTestResource(value = PackagedAppConfig.class, scope = TestResourceScope.MATCHING_RESOURCES)
class RedisFlushBackstopIT {
    private static final ApiClient CLIENT = PackagedAppConfig.CLIENT;
    private final RedisDatabase redis = RedisDatabase.ofApplication();

    @Test
    void replaysFromPostgresWhatRedisForgot() throws Exception {
        String openKey = ApiClient.newKey();
        Response opened = CLIENT.openAccount(openKey, "SEK");
        String id = opened.path("id");
        String applied = ApiClient.newKey();
        String refused = ApiClient.newKey();
        Response appliedFirst = CLIENT.postTransaction(id, applied, transaction("CREDIT", 300, 1));
        Response refusedFirst = CLIENT.postTransaction(id, refused, transaction("DEBIT", 301, 2));
        assertTrue(redis.size() >= 3, "the answers were recorded in Redis: " + redis.size() + " keys in " + redis);

        redis.flush();
        assertEquals(0, redis.size());

        for (Response[] pair : List.of(
                new Response[]{opened, CLIENT.openAccount(openKey, "SEK")},
                new Response[]{appliedFirst, CLIENT.postTransaction(id, applied, transaction("CREDIT", 300, 1))},
                new Response[]{refusedFirst, CLIENT.postTransaction(id, refused, transaction("DEBIT", 301, 2))})) {
            assertEquals(pair[0].statusCode(), pair[1].statusCode(), pair[1].asString());
            assertEquals("true", pair[1].header("Idempotent-Replayed"));
            assertEquals(pair[0].asString(), pair[1].asString());
            assertEquals(pair[0].header("Location"), pair[1].header("Location"));
            assertEquals(pair[0].contentType(), pair[1].contentType());
        }
        assertEquals(300, CLIENT.balance(id));
        assertEquals(1, CLIENT.entryCount(id));
        assertTrue(redis.size() >= 3, "the replays refilled Redis: " + redis.size() + " keys");
    }

    @Test
    void detectsKeyReuseFromPostgresWhenRedisForgot() throws Exception {
        String id = CLIENT.newAccount();
        String key = ApiClient.newKey();
        CLIENT.postTransaction(id, key, transaction("CREDIT", 300, 1));
        redis.flush();

        assertProblem(CLIENT.postTransaction(id, key, transaction("CREDIT", 999, 2)), 422, "idempotency-key-reused");
        assertEquals(300, CLIENT.balance(id));
        Response original = CLIENT.postTransaction(id, key, transaction("CREDIT", 300, 1));
        assertEquals(201, original.statusCode());
        assertEquals("true", original.header("Idempotent-Replayed"));
    }

    @Test
    void appliesAStormOfAForgottenKeyNoMore() throws Exception {
        String id = CLIENT.newAccount();
        String key = ApiClient.newKey();
        String body = transaction("CREDIT", 900, 1);
        Response first = CLIENT.postTransaction(id, key, body);
        redis.flush();

        // Every duplicate now misses in Redis at once and races to Postgres, which holds the record.
        List<Answer> answers = ConcurrencyStormIT.storm().burst("/accounts/" + id + "/transactions",
                Collections.nCopies(ConcurrencyStormIT.STORM, new String[]{key, body}));

        for (Answer answer : answers) {
            if (answer.status() == 201) {
                assertEquals("true", answer.replayed(), "nothing is applied again");
                assertEquals(first.asString(), answer.body());
            } else {
                assertEquals(409, answer.status(), answer.body());
                assertEquals("/problems/request-in-progress", answer.type());
            }
        }
        assertTrue(answers.stream().anyMatch(a -> a.status() == 201), "at least one duplicate got the replay");
        assertEquals(900, CLIENT.balance(id));
        assertEquals(1, CLIENT.entryCount(id));
    }
}
