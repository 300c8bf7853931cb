package dev.ledger.transfer;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.testing.Sql;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.FastPathStore;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.lookup;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static dev.ledger.testing.LedgerApi.post;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static dev.ledger.testing.LedgerApi.transferBody;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every answer and refusal of the transfer resources recorded with its key and replayed byte for byte: after
 * the transfer changed (posted, voided, reversed, expired), from the fast path's store and, once the store
 * forgot every key, from PostgreSQL; with Redis here and DynamoDB in {@link DynamoDbTransferIdempotencyTest}.
 * And the answers recorded before there were holds, which replay without the members holds brought.
 */
@QuarkusTest
class TransferIdempotencyTest {
    @Inject
    RedisDataSource redis;


    /** The store under test. */
    FastPathStore store() {
        return FastPathStore.redis(redis);
    }

    /** A request sent once, with the answer it got, to send again. */
    private record Sent(String path, String key, String body, Response first) {
        static Sent of(String path, String body) {
            String key = newKey();
            return new Sent(path, key, body, post(path, key, body));
        }

        void assertReplayed(String when) {
            Response replay = post(path, key, body);
            assertEquals(first.statusCode(), replay.statusCode(), when + ": " + path + " " + body + " " + replay.asString());
            assertEquals("true", replay.header("Idempotent-Replayed"), when + ": " + path + " " + body);
            assertEquals(first.asString(), replay.asString(), when + ": " + path + " " + body);
            assertEquals(first.header("Location"), replay.header("Location"), when);
            assertEquals(first.contentType(), replay.contentType(), when);
            assertNotNull(first.header("Idempotency-Expires"), path + " " + body);
            assertEquals(first.header("Idempotency-Expires"), replay.header("Idempotency-Expires"), when + ": " + path + " " + body);
        }

        /** The key's lookup says what the first answer was: its status and {@code Location}, and the request's path. */
        void assertLookedUp() {
            Response found = lookup(key);
            assertEquals(200, found.statusCode(), path + " " + body + " " + found.asString());
            assertEquals("completed", found.path("state"));
            assertEquals(path, found.path("path"));
            assertEquals(first.statusCode(), (int) found.path("status"), path + " " + body);
            assertEquals(first.header("Location"), found.path("location"), path + " " + body);
        }
    }

    @Test
    void replaysEveryAnswerByteForByteAfterTheTransferChangedAndTheStoreForgot() {
        String debit = newAccount();
        credit(debit, 10_000, 1);
        String credit = newAccount();
        String dollars = openAccount(newKey(), "USD").path("id");
        List<Sent> sent = new ArrayList<>();
        Sent posted = Sent.of("/transfers", transferBody(debit, credit, 1000, "\"reference\":\"order-1\""));
        Sent hold = Sent.of("/transfers", transferBody(debit, credit, 500, "\"pending\":true,\"timeoutSeconds\":600"));
        Sent voidable = Sent.of("/transfers", transferBody(debit, credit, 200, "\"pending\":true"));
        sent.addAll(List.of(posted, hold, voidable));
        String postedId = posted.first().path("id");
        String holdId = hold.first().path("id");
        String voidableId = voidable.first().path("id");
        Sent partialPost = Sent.of("/transfers/" + holdId + "/post", "{\"amount\":300}");
        Sent voided = Sent.of("/transfers/" + voidableId + "/void", "{}");
        Sent reversal = Sent.of("/transfers/" + postedId + "/reversals", "{\"amount\":100,\"reference\":\"refund\"}");
        sent.addAll(List.of(partialPost, voided, reversal));
        // every refusal
        sent.addAll(List.of(
                Sent.of("/transfers", transferBody(UUID.randomUUID().toString(), credit, 1, "")),
                Sent.of("/transfers", transferBody(debit, dollars, 1, "")),
                Sent.of("/transfers", transferBody(debit, credit, 1, "\"debitSequence\":1")),
                Sent.of("/transfers", transferBody(debit, credit, 1_000_000, "")),
                Sent.of("/transfers/" + UUID.randomUUID() + "/post", "{}"),
                Sent.of("/transfers/not-a-uuid/void", "{}"),
                Sent.of("/transfers/" + holdId + "/post", "{}"),
                Sent.of("/transfers/" + voidableId + "/post", "{}"),
                Sent.of("/transfers/" + postedId + "/void", "{}"),
                Sent.of("/transfers/" + holdId + "/reversals", "{\"amount\":301}"),
                Sent.of("/transfers/" + voidableId + "/reversals", "{}"),
                Sent.of("/accounts/" + debit + "/transactions", transaction("DEBIT", 1_000_000, 50))));
        Sent live = Sent.of("/transfers", transferBody(debit, credit, 50, "\"pending\":true"));
        sent.add(live);
        sent.add(Sent.of("/transfers/" + live.first().path("id") + "/post", "{\"amount\":51}"));
        List<Integer> statuses = sent.stream().map(s -> s.first().statusCode()).toList();
        assertEquals(List.of(201, 201, 201, 200, 200, 201, 404, 422, 409, 422, 404, 404, 409, 409, 409, 422, 409, 422, 201, 422),
                statuses, sent.stream().map(s -> s.first().asString()).toList().toString());

        // The transfers change after their answers: the hold reversed, the first transfer reversed in full, the live hold voided.
        assertEquals(201, post("/transfers/" + holdId + "/reversals", newKey(), "{}").statusCode());
        assertEquals(201, post("/transfers/" + postedId + "/reversals", newKey(), "{}").statusCode());
        assertEquals(200, post("/transfers/" + live.first().path("id") + "/void", newKey(), "{}").statusCode());

        for (Sent request : sent) {
            request.assertReplayed("from the store");
        }
        store().flush();
        for (Sent request : sent) {
            request.assertLookedUp();
            request.assertReplayed("from PostgreSQL");
        }
        // applied once: 1000 and 300 moved, then given back (100, 300 and 900)
        assertEquals(10_000 - 1000 - 300 + 100 + 300 + 900, balance(debit));
        assertEquals(0, balance(credit));
    }

    @Test
    void aKeyIsOneRequestWhateverTheSpellingOfItsAccountsAndAnotherRequestIsRefused() {
        String debit = newAccount();
        credit(debit, 100, 1);
        String credit = newAccount();
        String key = newKey();
        Response first = post("/transfers", key, transferBody(debit, credit, 10, ""));
        assertEquals(201, first.statusCode());
        Response upper = post("/transfers", key, "{\"amount\":10,\"creditAccountId\":\"" + credit.toUpperCase()
                + "\",\"debitAccountId\":\"" + debit.toUpperCase() + "\",\"reference\":null}");
        assertEquals(201, upper.statusCode(), upper.asString());
        assertEquals("true", upper.header("Idempotent-Replayed"));
        assertEquals(first.asString(), upper.asString());
        Response other = post("/transfers", key, transferBody(debit, credit, 11, ""));
        assertEquals(422, other.statusCode());
        assertEquals("/problems/idempotency-key-reused", other.path("type"));
        Response otherPath = post("/transfers/" + first.path("id") + "/reversals", key, "{}");
        assertEquals(422, otherPath.statusCode());
        store().flush();
        assertEquals(422, post("/transfers", key, transferBody(debit, credit, 11, "")).statusCode());
        assertEquals(90, balance(debit));
    }

    /**
     * Answers recorded by the previous version: an open and an insufficient-funds refusal, whose records have no
     * available (as every record written before V7), replay as they were answered, without the members holds
     * brought; the same answers recorded now carry them.
     */
    @Test
    void answersRecordedBeforeThereWereHoldsReplayWithoutTheirMembers() throws Exception {
        String account = newAccount();
        credit(account, 100, 1);
        String openKey = newKey();
        Response opened = openAccount(openKey, "EUR");
        String poorKey = newKey();
        Response poor = postTransaction(account, poorKey, transaction("DEBIT", 101, 2));
        assertEquals(0, (int) opened.path("available"));
        assertEquals(100, (int) poor.path("available"));

        try (Connection db = Sql.connectFor(ApiClient.DEV.id());
             PreparedStatement forget = db.prepareStatement(
                     "UPDATE idempotency_records SET available = NULL WHERE client = ? AND key_hash = ?")) {
            for (String key : List.of(openKey, poorKey)) {
                forget.setString(1, ApiClient.DEV.id());
                forget.setBytes(2, IdempotentRequest.of(ApiClient.DEV.id(), new IdempotencyKey(key), "POST", "/",
                        JsonNodeFactory.instance.objectNode()).keyHash());
                assertEquals(1, forget.executeUpdate(), key);
            }
        }
        store().flush();
        Response oldOpen = openAccount(openKey, "EUR");
        assertEquals("{\"id\":\"" + opened.path("id") + "\",\"currency\":\"EUR\",\"balance\":0,\"lastSequence\":0,\"createdAt\":\""
                + opened.path("createdAt") + "\"}", oldOpen.asString());
        Response oldPoor = postTransaction(account, poorKey, transaction("DEBIT", 101, 2));
        assertEquals("{\"type\":\"/problems/insufficient-funds\",\"title\":\"Insufficient funds\",\"status\":422,"
                + "\"detail\":\"Debit of 101 exceeds balance 100\",\"balance\":100}", oldPoor.asString());
        assertEquals("true", oldPoor.header("Idempotent-Replayed"));
        assertFalse(oldOpen.asString().contains("available"));
        assertNull(oldPoor.path("available"));
    }
}
