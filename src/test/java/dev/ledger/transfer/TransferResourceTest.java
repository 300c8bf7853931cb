package dev.ledger.transfer;

import dev.ledger.testing.Sql;
import dev.ledger.testing.ApiClient;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.ledger.testing.LedgerApi.account;
import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.getTransfer;
import static dev.ledger.testing.LedgerApi.given;
import static dev.ledger.testing.LedgerApi.lastSequence;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.settle;
import static dev.ledger.testing.LedgerApi.transaction;
import static dev.ledger.testing.LedgerApi.transfer;
import static dev.ledger.testing.LedgerApi.transferBody;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transfer resources of the contract: made posted, held, posted, voided, reversed, read; and every refusal, in its order. */
@QuarkusTest
class TransferResourceTest {

    /** A fresh EUR account credited with {@code amount} at sequence 1. */
    static String funded(long amount) {
        String account = newAccount();
        credit(account, amount, 1);
        return account;
    }

    private static void assertAccount(String id, long balance, long pendingDebits, long pendingCredits) {
        Response account = account(id);
        assertEquals(200, account.statusCode(), account.asString());
        assertEquals(balance, ((Number) account.path("balance")).longValue(), account.asString());
        assertEquals(pendingDebits, ((Number) account.path("pendingDebits")).longValue(), account.asString());
        assertEquals(pendingCredits, ((Number) account.path("pendingCredits")).longValue(), account.asString());
        assertEquals(balance - pendingDebits, ((Number) account.path("available")).longValue(), account.asString());
    }

    private static List<String> members(Response response) {
        try {
            List<String> names = new java.util.ArrayList<>();
            new com.fasterxml.jackson.databind.ObjectMapper().readTree(response.asString()).fieldNames().forEachRemaining(names::add);
            return names;
        } catch (java.io.IOException e) {
            throw new AssertionError(response.asString(), e);
        }
    }

    private static void assertProblem(Response response, int status, String slug) {
        assertEquals(status, response.statusCode(), response.asString());
        assertEquals("application/problem+json", response.contentType());
        assertEquals("/problems/" + slug, response.path("type"), response.asString());
    }

    @Test
    void movesMoneyAtOnceWithALegInEachAccount() {
        String debit = funded(10_000);
        String credit = newAccount();
        Response created = transfer(transferBody(debit, credit, 1250, "\"reference\":\"order-8812\""));
        assertEquals(201, created.statusCode(), created.asString());
        String id = created.path("id");
        assertEquals("/transfers/" + id, created.header("Location"));
        assertEquals(List.of("id", "debitAccountId", "creditAccountId", "amount", "currency", "reference", "status",
                "postedAmount", "reversedAmount", "reversalOf", "expiresAt", "createdAt"), members(created));
        assertEquals(debit, created.path("debitAccountId"));
        assertEquals(credit, created.path("creditAccountId"));
        assertEquals(1250, (int) created.path("amount"));
        assertEquals("EUR", created.path("currency"));
        assertEquals("order-8812", created.path("reference"));
        assertEquals("posted", created.path("status"));
        assertEquals(1250, (int) created.path("postedAmount"));
        assertEquals(0, (int) created.path("reversedAmount"));
        assertNull(created.path("reversalOf"));
        assertNull(created.path("expiresAt"));
        Instant.parse(created.path("createdAt"));

        assertAccount(debit, 8750, 0, 0);
        assertAccount(credit, 1250, 0, 0);
        assertEquals(2, lastSequence(debit));
        assertEquals(1, lastSequence(credit));
        Response debitLeg = ApiClient.DEV.transactions(debit);
        assertEquals("DEBIT", debitLeg.path("items[1].type"));
        assertEquals(1250, (int) debitLeg.path("items[1].amount"));
        assertEquals(8750, (int) debitLeg.path("items[1].balanceAfter"));
        assertEquals("order-8812", debitLeg.path("items[1].reference"));
        assertEquals(id, debitLeg.path("items[1].transferId"));
        assertNull(debitLeg.path("items[0].transferId"), "a transaction of its own names no transfer");
        assertTrue(!debitLeg.asString().contains("\"transferId\":null"), debitLeg.asString());
        Response creditLeg = ApiClient.DEV.transactions(credit);
        assertEquals("CREDIT", creditLeg.path("items[0].type"));
        assertEquals(id, creditLeg.path("items[0].transferId"));
        String legId = creditLeg.path("items[0].id");
        assertEquals(id, ApiClient.DEV.transaction(credit, legId).path("transferId"));

        Response read = getTransfer(id);
        assertEquals(200, read.statusCode());
        assertEquals(created.asString(), read.asString(), "nothing changed since: the same transfer");
    }

    @Test
    void takesTheSequencesItIsGivenAndRefusesStaleOnesNamingTheAccount() {
        String debit = funded(10_000);
        String credit = newAccount();
        credit(credit, 5, 7);
        Response given = transfer(transferBody(debit, credit, 100, "\"debitSequence\":10,\"creditSequence\":20"));
        assertEquals(201, given.statusCode(), given.asString());
        assertEquals(10, lastSequence(debit));
        assertEquals(20, lastSequence(credit));

        Response staleDebit = transfer(transferBody(debit, credit, 100, "\"debitSequence\":10,\"creditSequence\":21"));
        assertProblem(staleDebit, 409, "stale-sequence");
        assertEquals(debit, staleDebit.path("accountId"));
        assertEquals(10, (int) staleDebit.path("lastSequence"));
        // both stale: the debit leg is named; stale and short of funds: the sequence wins
        Response both = transfer(transferBody(debit, credit, 1_000_000, "\"debitSequence\":3,\"creditSequence\":3"));
        assertProblem(both, 409, "stale-sequence");
        assertEquals(debit, both.path("accountId"));
        Response staleCredit = transfer(transferBody(debit, credit, 100, "\"creditSequence\":20"));
        assertProblem(staleCredit, 409, "stale-sequence");
        assertEquals(credit, staleCredit.path("accountId"));
        assertEquals(20, (int) staleCredit.path("lastSequence"));
        assertAccount(debit, 9900, 0, 0);
    }

    @Test
    void holdsThenPostsPartOfAHoldReleasingTheRest() {
        String debit = funded(10_000);
        String credit = newAccount();
        Response hold = transfer(transferBody(debit, credit, 1000, "\"pending\":true,\"timeoutSeconds\":600"));
        assertEquals(201, hold.statusCode(), hold.asString());
        assertEquals("pending", hold.path("status"));
        assertEquals(0, (int) hold.path("postedAmount"));
        assertEquals(Duration.ofSeconds(600), Duration.between(Instant.parse(hold.path("createdAt")), Instant.parse(hold.path("expiresAt"))));
        assertAccount(debit, 10_000, 1000, 0);
        assertAccount(credit, 0, 0, 1000);
        assertEquals(1, ApiClient.DEV.entryCount(debit), "a hold writes no entry");
        assertEquals(0, ApiClient.DEV.entryCount(credit));

        // the hold is kept aside: a debit may take only what is available, and is told both numbers
        Response tooMuch = postTransaction(debit, newKey(), transaction("DEBIT", 9001, 2));
        assertProblem(tooMuch, 422, "insufficient-funds");
        assertEquals(10_000, (int) tooMuch.path("balance"));
        assertEquals(9000, (int) tooMuch.path("available"));
        Response anotherHold = transfer(transferBody(debit, credit, 9001, "\"pending\":true"));
        assertProblem(anotherHold, 422, "insufficient-funds");
        assertEquals(9000, (int) anotherHold.path("available"));

        String id = hold.path("id");
        Response posted = settle(id, "post", "{\"amount\":400,\"debitSequence\":5}");
        assertEquals(200, posted.statusCode(), posted.asString());
        assertNull(posted.header("Location"));
        assertEquals("posted", posted.path("status"));
        assertEquals(1000, (int) posted.path("amount"), "the amount asked for stays");
        assertEquals(400, (int) posted.path("postedAmount"));
        assertEquals((String) hold.path("expiresAt"), posted.path("expiresAt"), "it was a hold");
        assertAccount(debit, 9600, 0, 0);
        assertAccount(credit, 400, 0, 0);
        assertEquals(5, lastSequence(debit));
        assertEquals(1, lastSequence(credit));
        assertEquals(posted.asString(), getTransfer(id).asString());
    }

    @Test
    void postsAWholeHoldByDefaultAndVoidsAnother() {
        String debit = funded(10_000);
        String credit = newAccount();
        String first = transfer(transferBody(debit, credit, 700, "\"pending\":true")).path("id");
        Response hold = transfer(transferBody(debit, credit, 300, "\"pending\":true"));
        String second = hold.path("id");
        assertEquals(Duration.ofSeconds(86_400), Duration.between(Instant.parse(hold.path("createdAt")), Instant.parse(hold.path("expiresAt"))),
                "a hold lasts a day unless told");
        assertAccount(debit, 10_000, 1000, 0);

        Response posted = settle(first, "post", "{}");
        assertEquals(200, posted.statusCode(), posted.asString());
        assertEquals(700, (int) posted.path("postedAmount"));
        Response voided = settle(second, "void", "{}");
        assertEquals(200, voided.statusCode(), voided.asString());
        assertEquals("voided", voided.path("status"));
        assertEquals(0, (int) voided.path("postedAmount"));
        assertAccount(debit, 9300, 0, 0);
        assertAccount(credit, 700, 0, 0);
        assertEquals(voided.asString(), getTransfer(second).asString());
    }

    @Test
    void settlingWhatIsNotALiveHoldIsRefusedByItsState() {
        String debit = funded(10_000);
        String credit = newAccount();
        String atOnce = transfer(transferBody(debit, credit, 10, "")).path("id");
        assertProblem(settle(atOnce, "post", "{}"), 409, "transfer-not-pending");
        assertProblem(settle(atOnce, "void", "{}"), 409, "transfer-not-pending");

        String posted = transfer(transferBody(debit, credit, 10, "\"pending\":true")).path("id");
        assertEquals(200, settle(posted, "post", "{}").statusCode());
        assertProblem(settle(posted, "post", "{}"), 409, "transfer-already-posted");
        assertProblem(settle(posted, "void", "{}"), 409, "transfer-already-posted");

        String voided = transfer(transferBody(debit, credit, 10, "\"pending\":true")).path("id");
        assertEquals(200, settle(voided, "void", "{}").statusCode());
        assertProblem(settle(voided, "void", "{}"), 409, "transfer-already-voided");
        // the state comes before the sequences and the amount
        assertProblem(settle(voided, "post", "{\"amount\":999999,\"debitSequence\":1}"), 409, "transfer-already-voided");

        String live = transfer(transferBody(debit, credit, 50, "\"pending\":true")).path("id");
        Response tooMuch = settle(live, "post", "{\"amount\":51}");
        assertProblem(tooMuch, 422, "amount-exceeds-pending");
        assertEquals(50, (int) tooMuch.path("pendingAmount"));
        credit(credit, 1, 9);
        Response stale = settle(live, "post", "{\"creditSequence\":9}");
        assertProblem(stale, 409, "stale-sequence");
        assertEquals(credit, stale.path("accountId"));
        assertEquals(9, (int) stale.path("lastSequence"));
        // the sequence before the amount
        assertProblem(settle(live, "post", "{\"amount\":51,\"creditSequence\":9}"), 409, "stale-sequence");
        assertProblem(settle(live, "reversals", "{}"), 409, "transfer-not-posted");
        assertEquals(200, settle(live, "post", "{\"amount\":50}").statusCode());

        for (String unknown : new String[]{UUID.randomUUID().toString(), "not-a-uuid"}) {
            for (String action : new String[]{"post", "void", "reversals"}) {
                assertProblem(settle(unknown, action, "{}"), 404, "transfer-not-found");
            }
            assertProblem(getTransfer(unknown), 404, "transfer-not-found");
        }
        // another client's transfer does not exist for the caller
        assertProblem(ApiClient.OTHER.settle(live, "reversals", "{}"), 404, "transfer-not-found");
        assertProblem(ApiClient.OTHER.getTransfer(live), 404, "transfer-not-found");
    }

    @Test
    void reversesInPartsUntilNothingIsLeft() {
        String debit = funded(10_000);
        String credit = newAccount();
        String original = transfer(transferBody(debit, credit, 1250, "")).path("id");
        Response part = settle(original, "reversals", "{\"amount\":500,\"reference\":\"refund-31\"}");
        assertEquals(201, part.statusCode(), part.asString());
        String reversal = part.path("id");
        assertEquals("/transfers/" + reversal, part.header("Location"));
        assertEquals(credit, part.path("debitAccountId"));
        assertEquals(debit, part.path("creditAccountId"));
        assertEquals(original, part.path("reversalOf"));
        assertEquals("posted", part.path("status"));
        assertEquals(500, (int) part.path("postedAmount"));
        assertEquals("refund-31", part.path("reference"));
        assertNull(part.path("expiresAt"));
        assertEquals(500, (int) getTransfer(original).path("reversedAmount"));
        assertAccount(debit, 9250, 0, 0);
        assertAccount(credit, 750, 0, 0);

        Response tooMuch = settle(original, "reversals", "{\"amount\":751}");
        assertProblem(tooMuch, 422, "reversal-exceeds-transfer");
        assertEquals(750, (int) tooMuch.path("reversibleAmount"));
        Response rest = settle(original, "reversals", "{}");
        assertEquals(201, rest.statusCode(), rest.asString());
        assertEquals(750, (int) rest.path("amount"));
        Response nothingLeft = settle(original, "reversals", "{}");
        assertProblem(nothingLeft, 422, "reversal-exceeds-transfer");
        assertEquals(0, (int) nothingLeft.path("reversibleAmount"));
        Response read = getTransfer(original);
        assertEquals(1250, (int) read.path("reversedAmount"));
        assertEquals("posted", read.path("status"));
        assertAccount(debit, 10_000, 0, 0);
        assertAccount(credit, 0, 0, 0);

        // a reversal is a posted transfer of its own: it can be given back too, within its credit account's means
        Response back = settle(reversal, "reversals", "{\"amount\":100}");
        assertEquals(201, back.statusCode(), back.asString());
        assertEquals(reversal, back.path("reversalOf"));
        String spent = transfer(transferBody(debit, credit, 10_000 - 100, "")).path("id");
        assertTrue(spent != null);
        Response poor = settle(reversal, "reversals", "{\"amount\":400}");
        assertProblem(poor, 422, "insufficient-funds");
        assertEquals(0, (int) poor.path("available"));
    }

    @Test
    void refusesInTheContractsOrder() {
        String debit = funded(100);
        String credit = newAccount();
        String dollars = openAccount(newKey(), "USD").path("id");
        String unknown = UUID.randomUUID().toString();
        String others = ApiClient.OTHER.newAccount();

        // 404, naming the account: the debit account first
        Response both = transfer(transferBody(unknown, UUID.randomUUID().toString(), 1_000_000, "\"debitSequence\":1"));
        assertProblem(both, 404, "account-not-found");
        assertEquals(unknown, both.path("accountId"));
        Response creditUnknown = transfer(transferBody(debit, unknown, 1_000_000, ""));
        assertProblem(creditUnknown, 404, "account-not-found");
        assertEquals(unknown, creditUnknown.path("accountId"));
        Response another = transfer(transferBody(others, debit, 1, ""));
        assertProblem(another, 404, "account-not-found");
        assertEquals(others, another.path("accountId"));
        // 404 before the currency, the currency before the sequences and the funds
        assertProblem(transfer(transferBody(dollars, unknown, 1_000_000, "")), 404, "account-not-found");
        Response mismatch = transfer(transferBody(debit, dollars, 1_000_000, "\"debitSequence\":1"));
        assertProblem(mismatch, 422, "currency-mismatch");
        // the funds: balance and available
        Response poor = transfer(transferBody(debit, credit, 101, ""));
        assertProblem(poor, 422, "insufficient-funds");
        assertEquals(100, (int) poor.path("balance"));
        assertEquals(100, (int) poor.path("available"));
        assertAccount(debit, 100, 0, 0);
        assertAccount(credit, 0, 0, 0);
    }

    @Test
    void refusesBadBodiesWith400() {
        String debit = funded(100);
        String credit = newAccount();
        for (String body : List.of(
                transferBody(debit, debit, 1, ""),
                transferBody(debit, debit.toUpperCase(), 1, ""),
                transferBody("not-a-uuid", credit, 1, ""),
                transferBody(debit, "", 1, ""),
                "{\"debitAccountId\":\"" + debit + "\",\"amount\":1}",
                transferBody(debit, credit, 0, ""),
                transferBody(debit, credit, 1_000_000_000_000_001L, ""),
                transferBody(debit, credit, 1, "").replace("\"amount\":1", "\"amount\":1.0"),
                transferBody(debit, credit, 1, "").replace("\"amount\":1", "\"amount\":\"1\""),
                transferBody(debit, credit, 1, "\"pending\":\"yes\""),
                transferBody(debit, credit, 1, "\"timeoutSeconds\":60"),
                transferBody(debit, credit, 1, "\"pending\":false,\"timeoutSeconds\":60"),
                transferBody(debit, credit, 1, "\"pending\":true,\"timeoutSeconds\":0"),
                transferBody(debit, credit, 1, "\"pending\":true,\"timeoutSeconds\":604801"),
                transferBody(debit, credit, 1, "\"pending\":true,\"debitSequence\":5"),
                transferBody(debit, credit, 1, "\"pending\":true,\"creditSequence\":5"),
                transferBody(debit, credit, 1, "\"debitSequence\":0"),
                transferBody(debit, credit, 1, "\"reference\":\"" + "r".repeat(256) + "\""),
                transferBody(debit, credit, 1, "\"ammount\":1"))) {
            assertProblem(transfer(body), 400, "invalid-request");
        }
        String hold = transfer(transferBody(debit, credit, 10, "\"pending\":true,\"timeoutSeconds\":604800")).path("id");
        for (String[] bad : new String[][]{{"post", "{\"amount\":0}"}, {"post", "{\"amount\":-1}"}, {"post", "{\"reference\":\"x\"}"},
                {"post", "{\"creditSequence\":\"1\"}"}, {"void", "{\"amount\":1}"}, {"reversals", "{\"amount\":0}"},
                {"reversals", "{\"debitSequence\":1}"}, {"void", ""}}) {
            assertProblem(settle(hold, bad[0], bad[1]), 400, "invalid-request");
        }
        assertAccount(debit, 100, 10, 0);
        assertEquals(1, lastSequence(debit));
        assertEquals("pending", getTransfer(hold).path("status"));
    }

    @Test
    void amountsUpToTenToTheFifteenMoveExactly() {
        long max = 1_000_000_000_000_000L;
        String debit = newAccount();
        credit(debit, max, 1);
        credit(debit, max, 2);
        String credit = newAccount();
        Response hold = transfer(transferBody(debit, credit, max, "\"pending\":true"));
        assertEquals(Long.toString(max), hold.jsonPath().getString("amount"));
        Response whole = transfer(transferBody(debit, credit, max, ""));
        assertEquals(201, whole.statusCode(), whole.asString());
        assertEquals(200, settle(hold.path("id"), "post", "{}").statusCode());
        assertEquals(0, balance(debit));
        assertEquals(2 * max, balance(credit));
    }

    @Test
    void theLastSequenceThereIsLeavesNoneForALeg() {
        String debit = funded(100);
        String credit = newAccount();
        credit(credit, 1, Long.MAX_VALUE);
        Response stale = transfer(transferBody(debit, credit, 1, ""));
        assertProblem(stale, 409, "stale-sequence");
        assertEquals(credit, stale.path("accountId"));
        assertEquals(Long.toString(Long.MAX_VALUE), stale.jsonPath().getString("lastSequence"));
    }

    @Test
    void aCreditLegPastTheLargestBalanceIsRefused() throws Exception {
        String debit = funded(10);
        String credit = funded(1);
        long nearMax = Long.MAX_VALUE - 5;
        // No API reaches 2^63 quickly (9,223 maximal credits), so put the balance there directly.
        try (Connection db = Sql.connectFor(ApiClient.DEV.id());
             PreparedStatement update = db.prepareStatement("UPDATE accounts SET balance = ? WHERE id = ?")) {
            update.setLong(1, nearMax);
            update.setObject(2, UUID.fromString(credit));
            assertEquals(1, update.executeUpdate());
        }
        Response over = transfer(transferBody(debit, credit, 6, ""));
        assertProblem(over, 422, "balance-limit-exceeded");
        assertEquals(Long.toString(nearMax), over.jsonPath().getString("balance"));
        Response hold = transfer(transferBody(debit, credit, 3, "\"pending\":true"));
        assertEquals(201, hold.statusCode(), hold.asString());
        // a hold counts as if posted: a second one would not fit beside it
        assertProblem(transfer(transferBody(debit, credit, 3, "\"pending\":true")), 422, "balance-limit-exceeded");
        // a transfer made posted counts only the balance
        assertEquals(201, transfer(transferBody(debit, credit, 3, "")).statusCode());
        // the hold's post no longer fits once other credits came first
        assertProblem(settle(hold.path("id"), "post", "{}"), 422, "balance-limit-exceeded");
        assertEquals(200, settle(hold.path("id"), "post", "{\"amount\":2}").statusCode());
        assertEquals(Long.MAX_VALUE, balance(credit));
    }

    @Test
    void theTransferPathsTakeOnlyTheirMethods() {
        Map<String, String> allowed = Map.of("/transfers", "POST", "/transfers/" + UUID.randomUUID(), "GET, HEAD",
                "/transfers/" + UUID.randomUUID() + "/post", "POST", "/transfers/" + UUID.randomUUID() + "/void", "POST",
                "/transfers/" + UUID.randomUUID() + "/reversals", "POST");
        allowed.forEach((path, methods) -> {
            Response wrong = given().when().delete(path).andReturn();
            assertProblem(wrong, 405, "method-not-allowed");
            assertEquals(methods, wrong.header("Allow"));
        });
    }
}
