package dev.ledger.http;

/**
 * Texts of the OpenAPI document: the idempotency policy (the document's description, set by
 * {@link ApiDocument}) and what the operations' annotations share.
 */
public final class OpenApiText {
    public static final String KEY = "Idempotency-Key";
    /**
     * The Idempotency-Key parameter's example, so Swagger UI pre-fills it: its request interceptor
     * ({@code quarkus.swagger-ui.request-interceptor}) replaces exactly this value with a random key.
     */
    public static final String KEY_PLACEHOLDER = "new";
    public static final String KEY_TEXT = "Required on every POST; see the idempotency policy in the API's description. "
            + "1-255 visible ASCII characters (0x21-0x7E), bare, or as an RFC 8941 string in double quotes (`\\\"` and "
            + "`\\\\` escapes; the quotes are not part of the key; the 255 limit applies to the decoded key, so the quoted "
            + "form may be longer).\n\n"
            + "In Swagger UI, leave the value `" + KEY_PLACEHOLDER + "` to send a fresh random key on each Execute; the key "
            + "sent is in the curl command shown under the button. To repeat a request (and see `Idempotent-Replayed: true`), "
            + "paste that key here instead of `" + KEY_PLACEHOLDER + "` and Execute again; with another body the same key is "
            + "idempotency-key-reused.";
    /** Bare visible ASCII without '"', or a quoted sf-string. */
    public static final String KEY_PATTERN = "^([!#-~]{1,255}|\"([ !#-\\[\\]-~]|\\\\[\"\\\\])+\")$";
    /** The longest quoted key: 255 decoded characters, each escaped, within its quotes. */
    public static final int KEY_MAX_ENCODED = 2 + 2 * 255;
    public static final String REPLAYED = "Idempotent-Replayed";
    public static final String REPLAYED_TEXT = "`true` when this is the recorded answer of an earlier request with the same "
            + "key (absent on a first answer)";
    public static final String EXPIRES = "Idempotency-Expires";
    public static final String EXPIRES_TEXT = "When the key stops being remembered (an HTTP date, RFC 9110 IMF-fixdate): "
            + "the same on the first answer and on every replay. On every answer recorded with the key, never on one that "
            + "was not (409 `request-in-progress`, 422 `idempotency-key-reused`, 400s, 401, 503).";
    /** RFC 9110's IMF-fixdate. */
    public static final String HTTP_DATE_PATTERN = "^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} "
            + "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$";
    public static final String KEY_LOOKUP_TEXT = "The key as the POST sent it, bare and percent-encoded (a key sent "
            + "quoted, `\"abc\"`, is looked up as `abc`; quotes in the path are not taken off, so they make it malformed)";
    public static final String ACCOUNT_ID = "The account's id (a UUID), as `openAccount` answered it";
    public static final String TRANSACTION_ID = "The transaction's id (a UUID), as `postTransaction` answered it";
    public static final String TRANSFER_ID = "The transfer's id (a UUID), as `createTransfer` or `reverseTransfer` answered it";
    public static final String PREFER_TEXT = "RFC 7240. `wait=N`: if a request with this key is in flight, wait up to N "
            + "seconds (at most `ledger.idempotency.max-wait`, 10 by default) for its recorded answer and return it as a "
            + "replay, with `Preference-Applied: wait=N`, instead of 409 `request-in-progress`. If the original has not "
            + "finished by then, the answer is as without the preference; if it gave the key back (it failed), this "
            + "request executes. Waiting holds no thread and no database connection.";
    /** The security scheme every operation requires. */
    public static final String API_KEY = "bearerApiKey";
    public static final String API_KEY_TEXT = "Paste the API key alone, without the word Bearer: this is an HTTP bearer "
            + "scheme, so Swagger UI adds `Bearer ` itself (the header sent is `Authorization: Bearer ` followed by the key). "
            + "Dev mode knows the development key that the project's README gives; a packaged application knows only the "
            + "keys its operator configured (ledger.api-keys, as client-id:sha256hex). The key decides which "
            + "client's accounts and Idempotency-Keys a request sees: another client's account does not exist for the "
            + "caller (404 account-not-found).";

    /** The idempotency policy, stated once: the document's description. */
    public static final String POLICY = """
            Payment ledger whose every POST is applied at most once, however often a client retries it.

            **Authentication.** Every request outside `/q/` sends `Authorization: Bearer <api-key>` (in Swagger UI: \
            *Authorize*, then paste the key alone). A missing, malformed or unknown key is 401 `unauthorized`, \
            decided before anything else.

            **Idempotency policy.**
            - *Key*: every POST sends an `Idempotency-Key` of 1-255 visible ASCII characters (0x21-0x7E), or the \
            same as an RFC 8941 string in double quotes. A key belongs to the client that sent it: two clients' \
            equal keys are two keys.
            - *Request*: a key is matched with a fingerprint of the request: method, path and the JSON body compared \
            by meaning (white space, member order, a `null` for a member left out, the case of the account id and a \
            trailing `/` do not matter). The same key with another request is 422 \
            `idempotency-key-reused`, and the key keeps its first answer.
            - *What is recorded*: the first request that reaches a definite business answer records it with the key: \
            201 (200 for a transfer's post or void), and the refusals 404 `account-not-found` and `transfer-not-found`, \
            409 `stale-sequence` and the transfer's state (`transfer-not-pending`, `transfer-already-posted`, \
            `transfer-already-voided`, `transfer-expired`, `transfer-not-posted`), 422 `insufficient-funds`, \
            `balance-limit-exceeded`, `currency-mismatch`, `amount-exceeds-pending` and `reversal-exceeds-transfer`. \
            A transfer's answer shows it at the moment of the request, whatever changed it since. Every retry with \
            the same key and request gets that answer again, even after \
            the fast path (Redis) lost its data: the record is in PostgreSQL, written in the same transaction as the \
            balance change. Nothing else is recorded (400s, 401, 406, 409 `request-in-progress`, 413-417, 422 \
            `idempotency-key-reused`, 431, 500, 503): the key stays free and a retry executes afresh, at most once.
            - *Replay*: the recorded status, body, `Content-Type` and `Location`, byte for byte, plus \
            `Idempotent-Replayed: true`.
            - *Retention*: a completed key replays its answer for at least 24 hours (`ledger.idempotency.retention`). \
            Every recorded answer, the first and each replay, says until when in `Idempotency-Expires` (an HTTP date).
            - *Lease*: while a request is in flight its key is leased for 30 seconds (`ledger.idempotency.lease`); a \
            duplicate meanwhile gets 409 `request-in-progress` with `Retry-After` (the lease's remaining seconds, at \
            least 1). A lease outlives a crashed instance only until it expires. With `Prefer: wait=N` (RFC 7240, N \
            capped by `ledger.idempotency.max-wait`, 10 s by default) the duplicate instead waits up to N seconds for \
            the original's recorded answer and gets it as a replay, with `Preference-Applied: wait=N`.
            - *Lookup*: `GET /idempotency-keys/{key}` says what became of one of the caller's keys: `completed` with \
            the recorded answer's status and `Location`, or `in-flight` with the lease's end; 404 \
            `idempotency-key-not-found` when the key is unknown or expired. It answers from PostgreSQL while Redis is \
            down (a key in flight is then not seen).
            - *503*: a 503 `service-unavailable` means the request may or may not have been applied. Retry with the \
            same key: it is applied at most once, and the retry answers with the outcome.

            **Errors.** Every error body is RFC 9457 `application/problem+json`: `type` is a URI reference \
            `/problems/<slug>`, `title`, `status`, `detail`, and the extension members `balance`, `available`, \
            `lastSequence`, `accountId`, `pendingAmount` or `reversibleAmount` where a client needs the number. Any path also answers 404 `not-found` when nothing is there, and 405 \
            `method-not-allowed` with `Allow` for a method the path does not take. A request the HTTP decoder cannot \
            read (an invalid character in a header, a malformed request line, a request line over 8192 characters or \
            headers over 32 KiB) gets a bare 400, 414 or 431 with no body, before any of the API runs. The problem \
            types:""";

    private OpenApiText() {
    }
}
