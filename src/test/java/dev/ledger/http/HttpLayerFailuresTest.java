package dev.ledger.http;

import dev.ledger.testing.ApiClient;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.net.URL;

import static dev.ledger.testing.LedgerApi.balance;
import static dev.ledger.testing.LedgerApi.newAccount;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.postTransaction;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A body the HTTP codec cannot decode is a 400 problem, and an answer already written still reaches the client. */
@QuarkusTest
class HttpLayerFailuresTest {
    @TestHTTPResource("/")
    URL base;

    /** A chunked credit whose first chunk size is not hexadecimal. */
    private static String malformedChunk(String account, String key, String authorization) {
        return "POST /accounts/" + account + "/transactions HTTP/1.1\r\nHost: localhost\r\n" + authorization
                + "Idempotency-Key: " + key + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "zz\r\n" + transaction("CREDIT", 5, 1) + "\r\n0\r\n\r\n";
    }

    @Test
    void refusesAMalformedChunkWithAProblem() throws Exception {
        String account = newAccount();
        String key = newKey();
        try (RawHttp http = new RawHttp(base)) {
            RawHttp.Answer answer = http.send(malformedChunk(account, key, "Authorization: " + ApiClient.DEV.authorization() + "\r\n")).read();
            String detail = answer.assertProblem(400, "invalid-request");
            assertTrue(detail.contains("chunk"), detail);
            assertEquals("close", answer.header("Connection"));
            assertTrue(http.closedByServer(), "the rest of the stream cannot be framed: the connection ends");
        }
        assertEquals(0, balance(account));
        Response applied = postTransaction(account, key, transaction("CREDIT", 5, 1));
        assertEquals(201, applied.statusCode(), "the key was reserved: " + applied.asString());
        assertNull(applied.header("Idempotent-Replayed"));
    }

    @Test
    void anHttp11RequestWithoutHostIsAProblemThatSaysSo() throws Exception {
        String account = newAccount();
        String key = newKey();
        try (RawHttp http = new RawHttp(base)) {
            String credit = RawHttp.credit("/accounts/" + account + "/transactions", key, "").replace("Host: localhost\r\n", "");
            String detail = http.send(credit).read().assertProblem(400, "invalid-request");
            assertTrue(detail.contains("Host"), detail);
        }
        assertEquals(0, balance(account));
        assertEquals(201, postTransaction(account, key, transaction("CREDIT", 5, 1)).statusCode(), "the key was reserved");
    }

    @Test
    void aRefusalWrittenBeforeTheMalformedChunkStillArrives() throws Exception {
        // no key: the 401 is written while the same read goes on to the malformed chunk, and Vert.x closes
        // the connection on it; before, that close dropped the unflushed 401 and the client got nothing
        String account = newAccount();
        try (RawHttp http = new RawHttp(base)) {
            http.send(malformedChunk(account, newKey(), "")).read().assertProblem(401, "unauthorized");
            assertTrue(http.closedByServer());
        }
    }
}
