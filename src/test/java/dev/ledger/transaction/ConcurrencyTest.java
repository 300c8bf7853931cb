package dev.ledger.transaction;

import dev.ledger.testing.ApiClient;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.PaymentLoad.Answer;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.entryCount;
import static dev.ledger.testing.LedgerApi.lastSequence;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Storms of simultaneous requests; every answer is checked, and the money adds up. */
@QuarkusTest
class ConcurrencyTest {
    private static final int STORM = 50;

    @TestHTTPResource("/")
    URL base;

    private List<Answer> storm(String path, List<String[]> keysAndBodies) throws Exception {
        return new PaymentLoad("concurrency", ApiClient.DEV, List.of(base.toURI())).burst(path, keysAndBodies);
    }

    @Test
    void appliesAConcurrentStormOfOneKeyOnce() throws Exception {
        String account = newAccount();
        String key = newKey();
        String body = transaction("CREDIT", 4242, 1);
        List<String[]> requests = Collections.nCopies(STORM, new String[]{key, body});

        List<Answer> answers = storm("/accounts/" + account + "/transactions", requests);

        PaymentLoad.assertOneOriginalAndTheRestReplaysOrInProgress(answers);
        assertEquals(4242, balance(account));
        assertEquals(1, entryCount(account));
    }

    @Test
    void appliesDistinctKeysOnOneAccountWithoutLosingAnUpdate() throws Exception {
        String account = newAccount();
        List<String[]> requests = new ArrayList<>();
        for (int sequence = 1; sequence <= STORM; sequence++) {
            requests.add(new String[]{newKey(), transaction("CREDIT", 1000 + sequence, sequence)});
        }
        Collections.shuffle(requests);

        List<Answer> answers = storm("/accounts/" + account + "/transactions", requests);

        long appliedSum = 0;
        long highestApplied = 0;
        int applied = 0;
        for (Answer answer : answers) {
            if (answer.status() == 201) {
                applied++;
                appliedSum += answer.json().get("amount").asLong();
                highestApplied = Math.max(highestApplied, answer.json().get("sequence").asLong());
            } else {
                assertEquals(409, answer.status(), answer.body());
                assertEquals("/problems/stale-sequence", answer.type());
            }
        }
        assertTrue(applied >= 1);
        assertEquals(STORM, highestApplied, "the highest sequence can never be stale");
        assertEquals(appliedSum, balance(account));
        assertEquals(highestApplied, lastSequence(account));
        assertEquals(applied, entryCount(account));
    }

    @Test
    void racingDebitsNeverOverdraw() throws Exception {
        String account = newAccount();
        credit(account, 1000, 1);
        List<String[]> requests = new ArrayList<>();
        for (int i = 0; i < STORM; i++) {
            // increasing sequences so that most are not stale; a high base keeps them above 1
            requests.add(new String[]{newKey(), transaction("DEBIT", 100, 1_000_000 + i)});
        }

        List<Answer> answers = storm("/accounts/" + account + "/transactions", requests);

        int applied = 0;
        for (Answer answer : answers) {
            switch (answer.status()) {
                case 201 -> {
                    applied++;
                    assertTrue(answer.json().get("balanceAfter").asLong() >= 0);
                }
                case 409 -> assertEquals("/problems/stale-sequence", answer.type());
                case 422 -> assertEquals("/problems/insufficient-funds", answer.type());
                default -> fail("unexpected answer " + answer);
            }
        }
        assertTrue(applied <= 10, applied + " debits of 100 applied to a balance of 1000");
        assertEquals(1000 - 100L * applied, balance(account));
        assertTrue(balance(account) >= 0);
        assertEquals(applied + 1, entryCount(account));
    }
}
