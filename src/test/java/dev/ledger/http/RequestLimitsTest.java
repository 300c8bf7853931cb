package dev.ledger.http;

import dev.ledger.testing.ApiClient;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URL;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request target or header section past the API's limits is a 414 / 431 problem, decided before
 * anything runs (authentication included); far past them the HTTP codec refuses it before any
 * handler, with the same status.
 */
@QuarkusTest
class RequestLimitsTest {
    @TestHTTPResource("/")
    URL base;

    private static String get(String target, String extraFields) {
        return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: " + ApiClient.DEV.authorization()
                + "\r\n" + extraFields + "\r\n";
    }

    /** The refused credit, now within the limits, executes afresh: the refusals reserved nothing. */
    private static void appliesAfresh(RawHttp http, String credit) throws IOException {
        RawHttp.Answer applied = http.send(credit).read();
        assertEquals(201, applied.status(), applied::toString);
        assertNull(applied.header("Idempotent-Replayed"), "a refused request reserved its key");
    }

    @Test
    void refusesHeadersOverTheLimitWithAProblem() throws Exception {
        String account = newAccount();
        String key = newKey();
        String transactions = "/accounts/" + account + "/transactions";
        try (RawHttp http = new RawHttp(base)) {
            String detail = http.send(RawHttp.credit(transactions, key, "X-Padding: " + "x".repeat(20_000) + "\r\n")).read()
                    .assertProblem(431, "headers-too-large");
            assertTrue(detail.contains("at most 16384"), detail);
            // many small fields count like one large one
            http.send(RawHttp.credit(transactions, key, "X-Padding: 0123456789\r\n".repeat(1_000))).read()
                    .assertProblem(431, "headers-too-large");
            // just under the limit is served, on the same connection
            appliesAfresh(http, RawHttp.credit(transactions, key, "X-Padding: " + "x".repeat(15_000) + "\r\n"));
        }
        assertEquals(5, balance(account));
    }

    @Test
    void refusesAnOverLongRequestTargetWithAProblem() throws Exception {
        String account = newAccount();
        String key = newKey();
        String transactions = "/accounts/" + account + "/transactions";
        try (RawHttp http = new RawHttp(base)) {
            String detail = http.send(get(transactions + "?after=0&pad=" + "x".repeat(5_000), "")).read()
                    .assertProblem(414, "uri-too-long");
            assertTrue(detail.contains("at most 4096"), detail);
            http.send(RawHttp.credit(transactions + "?pad=" + "x".repeat(5_000), key, "")).read().assertProblem(414, "uri-too-long");
            appliesAfresh(http, RawHttp.credit(transactions + "?pad=" + "x".repeat(3_900), key, ""));
        }
        assertEquals(5, balance(account));
    }

    @Test
    void theLimitsComeBeforeAuthentication() throws Exception {
        String account = newAccount();
        try (RawHttp http = new RawHttp(base)) {
            http.send("GET /accounts/" + account + " HTTP/1.1\r\nHost: localhost\r\nX-Padding: " + "x".repeat(20_000) + "\r\n\r\n")
                    .read().assertProblem(431, "headers-too-large");
            http.send("GET /accounts/" + account + "?pad=" + "x".repeat(5_000) + " HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    .read().assertProblem(414, "uri-too-long");
        }
    }

    @Test
    void farPastTheLimitsTheHttpCodecRefusesBeforeAnyHandler() throws Exception {
        // quarkus.http.limits.max-header-size (32K) and max-initial-line-length (8192): Netty's decoder marks
        // the request failed and Vert.x answers it with its default invalid request handler, which Quarkus
        // gives no way to replace (docs/api.md, "Refused below the application"); the status is the same,
        // and the connection is closed
        String account = newAccount();
        try (RawHttp http = new RawHttp(base)) {
            assertEquals(431, http.send(get("/accounts/" + account, "X-Padding: " + "x".repeat(40_000) + "\r\n")).read().status());
            assertTrue(http.closedByServer());
        }
        try (RawHttp http = new RawHttp(base)) {
            assertEquals(414, http.send(get("/accounts/" + account + "?pad=" + "x".repeat(9_000), "")).read().status());
            assertTrue(http.closedByServer());
        }
    }
}
