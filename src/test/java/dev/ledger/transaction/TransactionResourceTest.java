package dev.ledger.transaction;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.Sql;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.List;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.given;
import static dev.ledger.testing.LedgerApi.lastSequence;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

@QuarkusTest
class TransactionResourceTest {

    @Test
    void appliesACreditAndADebit() {
        String account = newAccount();
        Response credit = postTransaction(account, newKey(),
                "{\"type\":\"CREDIT\",\"amount\":10000,\"sequence\":1,\"reference\":\"order-8812\"}");
        assertEquals(201, credit.statusCode());
        String txId = credit.path("id");
        assertEquals("/accounts/" + account + "/transactions/" + txId, credit.header("Location"));
        assertEquals(account, credit.path("accountId"));
        assertEquals("CREDIT", credit.path("type"));
        assertEquals(10000, (int) credit.path("amount"));
        assertEquals(1, (int) credit.path("sequence"));
        assertEquals("order-8812", credit.path("reference"));
        assertEquals(10000, (int) credit.path("balanceAfter"));
        Instant.parse(credit.path("createdAt"));

        Response debit = postTransaction(account, newKey(), transaction("DEBIT", 1250, 17));
        assertEquals(201, debit.statusCode());
        assertEquals(8750, (int) debit.path("balanceAfter"));
        assertNull(debit.path("reference"));
        assertEquals(8750, balance(account));
        assertEquals(17, lastSequence(account));

        given().when().get("/accounts/" + account + "/transactions/" + txId).then().statusCode(200)
                .body("id", equalTo(txId)).body("balanceAfter", equalTo(10000))
                .body("createdAt", equalTo(credit.path("createdAt")));
    }

    @Test
    void amountsUpToTenToTheFifteenAreExactIntegers() {
        String account = newAccount();
        Response response = postTransaction(account, newKey(), transaction("CREDIT", 1_000_000_000_000_000L, 1));
        assertEquals(201, response.statusCode());
        assertEquals("1000000000000000", response.jsonPath().getString("amount"));
        credit(account, 999_999_999_999_999L, 2);
        assertEquals(1_999_999_999_999_999L, balance(account));
    }

    @Test
    void aStaleSequenceIsRefusedWithTheLastSequence() {
        String account = newAccount();
        credit(account, 100, 3);
        credit(account, 100, 5); // gaps are allowed
        Response stale = postTransaction(account, newKey(), transaction("CREDIT", 100, 4));
        assertEquals(409, stale.statusCode());
        assertEquals("application/problem+json", stale.contentType());
        assertEquals("/problems/stale-sequence", stale.path("type"));
        assertEquals(5, (int) stale.path("lastSequence"));
        assertEquals(409, postTransaction(account, newKey(), transaction("CREDIT", 100, 5)).statusCode());
        assertEquals(200, balance(account));
    }

    @Test
    void aDebitLargerThanTheBalanceIsRefusedWithTheBalance() {
        String account = newAccount();
        credit(account, 900, 1);
        Response response = postTransaction(account, newKey(), transaction("DEBIT", 1250, 2));
        assertEquals(422, response.statusCode());
        assertEquals("/problems/insufficient-funds", response.path("type"));
        assertEquals(900, (int) response.path("balance"));
        assertEquals(900, balance(account));
        assertEquals(1, lastSequence(account)); // a refused transaction does not consume its sequence
        assertEquals(201, postTransaction(account, newKey(), transaction("DEBIT", 900, 2)).statusCode());
        assertEquals(0, balance(account));
    }

    @Test
    void theSequenceCheckWinsOverInsufficientFunds() {
        String account = newAccount();
        credit(account, 10, 7);
        Response response = postTransaction(account, newKey(), transaction("DEBIT", 1000, 6));
        assertEquals(409, response.statusCode());
        assertEquals("/problems/stale-sequence", response.path("type"));
    }

    @Test
    void anUnknownAccountIsNotFound() {
        for (String id : new String[]{"00000000-0000-0000-0000-000000000001", "not-a-uuid"}) {
            Response response = postTransaction(id, newKey(), transaction("CREDIT", 1, 1));
            assertEquals(404, response.statusCode());
            assertEquals("/problems/account-not-found", response.path("type"));
        }
    }

    @Test
    void aCreditPastTheLargestBalanceIsRefusedAndRecorded() throws Exception {
        String account = newAccount();
        credit(account, 1, 1);
        long nearMax = Long.MAX_VALUE - 10;
        // No API reaches 2^63 quickly (9,223 maximal credits), so put the balance there directly.
        try (Connection db = Sql.connectFor(ApiClient.DEV.id());
             PreparedStatement update = db.prepareStatement("UPDATE accounts SET balance = ? WHERE id = ?")) {
            update.setLong(1, nearMax);
            update.setObject(2, java.util.UUID.fromString(account));
            assertEquals(1, update.executeUpdate());
        }
        String key = newKey();
        Response response = postTransaction(account, key, transaction("CREDIT", 11, 2));
        assertEquals(422, response.statusCode());
        assertEquals("/problems/balance-limit-exceeded", response.path("type"));
        assertEquals(Long.toString(nearMax), response.jsonPath().getString("balance"));
        Response replay = postTransaction(account, key, transaction("CREDIT", 11, 2));
        assertEquals(response.asString(), replay.asString());
        assertEquals("true", replay.header("Idempotent-Replayed"));
        assertEquals(201, postTransaction(account, newKey(), transaction("CREDIT", 10, 2)).statusCode());
        assertEquals(Long.MAX_VALUE, balance(account));
    }

    @Test
    void listsAppliedTransactionsInPagesBySequence() {
        String account = newAccount();
        List<Integer> sequences = List.of(2, 3, 5, 8, 13);
        for (int sequence : sequences) {
            credit(account, sequence, sequence);
        }
        postTransaction(account, newKey(), transaction("DEBIT", 1_000_000, 20)); // refused: not listed

        Response first = given().queryParam("limit", 2).when().get("/accounts/" + account + "/transactions").andReturn();
        assertEquals(200, first.statusCode());
        assertEquals(List.of(2, 3), first.jsonPath().getList("items.sequence"));
        assertEquals(3, first.jsonPath().getInt("next"));

        Response second = given().queryParam("limit", 2).queryParam("after", 3).when()
                .get("/accounts/" + account + "/transactions").andReturn();
        assertEquals(List.of(5, 8), second.jsonPath().getList("items.sequence"));
        assertEquals(8, second.jsonPath().getInt("next"));

        given().queryParam("limit", 2).queryParam("after", 8).when().get("/accounts/" + account + "/transactions")
                .then().statusCode(200).body("items.sequence", equalTo(List.of(13))).body("next", nullValue());
        // exactly a page's worth left: next is null, not a pointer to an empty page
        given().queryParam("limit", 1).queryParam("after", 8).when().get("/accounts/" + account + "/transactions")
                .then().statusCode(200).body("items.sequence", equalTo(List.of(13))).body("next", nullValue());
        given().when().get("/accounts/" + account + "/transactions")
                .then().statusCode(200).body("items.size()", equalTo(5)).body("next", nullValue());
        given().queryParam("after", 13).when().get("/accounts/" + account + "/transactions")
                .then().statusCode(200).body("items.size()", equalTo(0)).body("next", nullValue());
    }

    @Test
    void listingRejectsParametersOutOfRange() {
        String account = newAccount();
        for (String[] query : new String[][]{{"limit", "0"}, {"limit", "501"}, {"limit", "abc"}, {"after", "-1"},
                {"after", "1.5"}, {"limit", ""}, {"after", "99999999999999999999"}}) {
            given().queryParam(query[0], query[1]).when().get("/accounts/" + account + "/transactions")
                    .then().statusCode(400).contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-request"));
        }
        given().queryParam("limit", 500).when().get("/accounts/" + account + "/transactions").then().statusCode(200);
    }

    /** {@code limit=5&limit=500}: which one was meant cannot be told, so neither is taken. */
    @Test
    void aParameterGivenTwiceIsRefused() {
        String account = newAccount();
        for (String query : new String[]{"limit=5&limit=500", "after=0&after=0", "limit=2&after=1&limit=2"}) {
            given().urlEncodingEnabled(false).when().get("/accounts/" + account + "/transactions?" + query)
                    .then().statusCode(400).contentType("application/problem+json")
                    .body("type", equalTo("/problems/invalid-request")).body("detail", containsString("at most once"));
        }
    }

    @Test
    void onlyAnAmpersandSeparatesQueryParameters() {
        String account = newAccount();
        credit(account, 1, 1);
        // sent as written (no encoding of ';'): one parameter limit whose value is "5;after=3"
        given().urlEncodingEnabled(false).when().get("/accounts/" + account + "/transactions?limit=5;after=3")
                .then().statusCode(400).contentType("application/problem+json")
                .body("type", equalTo("/problems/invalid-request")).body("detail", containsString("'limit'"));
        given().urlEncodingEnabled(false).when().get("/accounts/" + account + "/transactions?limit=5&after=0")
                .then().statusCode(200).body("items.size()", equalTo(1));
    }

    @Test
    void readsTellUnknownAccountFromUnknownTransaction() {
        String account = newAccount();
        credit(account, 1, 1);
        String other = newAccount();
        Response otherTx = postTransaction(other, newKey(), transaction("CREDIT", 1, 1));
        String otherTxId = otherTx.path("id");

        given().when().get("/accounts/" + account + "/transactions/" + otherTxId).then().statusCode(404)
                .body("type", equalTo("/problems/transaction-not-found"));
        given().when().get("/accounts/" + account + "/transactions/not-a-uuid").then().statusCode(404)
                .body("type", equalTo("/problems/transaction-not-found"));
        given().when().get("/accounts/00000000-0000-0000-0000-000000000009/transactions/" + otherTxId).then().statusCode(404)
                .body("type", equalTo("/problems/account-not-found"));
        given().when().get("/accounts/nope/transactions/" + otherTxId).then().statusCode(404)
                .body("type", equalTo("/problems/account-not-found"));
        given().when().get("/accounts/nope/transactions").then().statusCode(404)
                .body("type", equalTo("/problems/account-not-found"));
        given().when().get("/accounts/00000000-0000-0000-0000-000000000009/transactions").then().statusCode(404)
                .body("type", equalTo("/problems/account-not-found"));
    }
}
