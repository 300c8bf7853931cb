package dev.ledger.testing;

import dev.ledger.http.OpenApiText;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * Requests of the public HTTP API as the development client sends them ({@link ApiClient#DEV}, with
 * its API key); {@link ApiClient} sends them as any other client.
 */
public final class LedgerApi {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    public static final String EXPIRES = OpenApiText.EXPIRES;
    private static final Pattern IMF_FIXDATE = Pattern.compile(OpenApiText.HTTP_DATE_PATTERN);

    private LedgerApi() {
    }

    /**
     * A transaction POST that is not waited for (for an original held in flight while copies arrive), with
     * {@code Prefer: <prefer>} unless null.
     */
    public static CompletableFuture<HttpResponse<String>> postTransactionAsync(String account, String key, String body, String prefer) {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create(RestAssured.baseURI + ":" + RestAssured.port + "/accounts/" + account + "/transactions"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .header("Authorization", ApiClient.DEV.authorization())
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (prefer != null) {
            request.header("Prefer", prefer);
        }
        return HTTP.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A RestAssured request carrying the development key; use it instead of {@code RestAssured.given()}. */
    public static RequestSpecification given() {
        return ApiClient.DEV.given();
    }

    public static String newKey() {
        return ApiClient.newKey();
    }

    public static Response post(String path, String key, String json) {
        return ApiClient.DEV.post(path, key, json);
    }

    public static Response openAccount(String key, String currency) {
        return ApiClient.DEV.openAccount(key, currency);
    }

    /** Opens a fresh EUR account and answers its id. */
    public static String newAccount() {
        return ApiClient.DEV.newAccount();
    }

    public static String transaction(String type, long amount, long sequence) {
        return "{\"type\":\"" + type + "\",\"amount\":" + amount + ",\"sequence\":" + sequence + "}";
    }

    /** A transfer's body: {@code amount} from {@code debit} to {@code credit}, and the {@code more} members given (a JSON fragment, or empty). */
    public static String transferBody(String debit, String credit, long amount, String more) {
        return "{\"debitAccountId\":\"" + debit + "\",\"creditAccountId\":\"" + credit + "\",\"amount\":" + amount
                + (more.isEmpty() ? "" : "," + more) + "}";
    }

    /** {@code POST /transfers} with a fresh key. */
    public static Response transfer(String json) {
        return ApiClient.DEV.transfer(json);
    }

    /** {@code POST /transfers/{id}/<action>} with a fresh key. */
    public static Response settle(String transferId, String action, String json) {
        return ApiClient.DEV.settle(transferId, action, json);
    }

    public static Response getTransfer(String transferId) {
        return ApiClient.DEV.getTransfer(transferId);
    }

    public static Response postTransaction(String accountId, String key, String json) {
        return ApiClient.DEV.postTransaction(accountId, key, json);
    }

    /** Credits an account with a fresh key; fails the test unless applied. */
    public static void credit(String accountId, long amount, long sequence) {
        ApiClient.DEV.credit(accountId, amount, sequence);
    }

    /** {@code GET /idempotency-keys/{key}} of the development client. */
    public static Response lookup(String key) {
        return ApiClient.DEV.lookup(key);
    }

    /**
     * The instant an answer's {@code Idempotency-Expires} names, checked to be an IMF-fixdate (RFC 9110); null when
     * the answer has none.
     */
    public static Instant keyExpiry(Response answer) {
        String date = answer.header(EXPIRES);
        if (date == null) {
            return null;
        }
        if (!IMF_FIXDATE.matcher(date).matches()) {
            throw new AssertionError(EXPIRES + " is not an IMF-fixdate: " + date);
        }
        return Instant.from(DateTimeFormatter.RFC_1123_DATE_TIME.parse(date));
    }

    public static Response account(String accountId) {
        return ApiClient.DEV.account(accountId);
    }

    public static long balance(String accountId) {
        return ApiClient.DEV.balance(accountId);
    }

    public static long lastSequence(String accountId) {
        return ApiClient.DEV.lastSequence(accountId);
    }

    public static int entryCount(String accountId) {
        return ApiClient.DEV.entryCount(accountId);
    }
}
