package dev.ledger.http;

/** Texts shared by the OpenAPI annotations of the resources, so every POST documents the same contract. */
public final class OpenApiText {
    public static final String KEY = "Idempotency-Key";
    public static final String KEY_TEXT = "Required on every POST. 1-255 visible ASCII characters (0x21-0x7E), bare, or as an "
            + "RFC 8941 string in double quotes (\\\" and \\\\ escapes; the quotes are not part of the key; the 255 limit "
            + "applies to the decoded key). Scoped to the client. A completed key replays its answer for at least 24 h.";
    /** Bare visible ASCII without '"', or a quoted sf-string. */
    public static final String KEY_PATTERN = "^([!#-~]{1,255}|\"([ !#-\\[\\]-~]|\\\\[\"\\\\])+\")$";
    public static final String REPLAYED = "Idempotent-Replayed";
    public static final String REPLAYED_TEXT = "\"true\" when this is the recorded answer of an earlier request with the same key";
    public static final String REPLAY = "A completed key answers its recorded status, body, Content-Type and Location again, "
            + "with Idempotent-Replayed: true; business 404/409/422 answers are recorded and replayed like a 201.";
    public static final String BAD_POST = "invalid-request (malformed JSON or invalid UTF-8, missing or wrong-typed member, "
            + "out of range, unknown member), idempotency-key-missing, idempotency-key-invalid";
    public static final String IN_PROGRESS = "request-in-progress: a request with this key is in flight; Retry-After gives "
            + "the remaining lease in seconds";
    public static final String TOO_LARGE = "payload-too-large: the body exceeds ledger.request.max-body-bytes (64 KiB)";
    public static final String UNSUPPORTED = "unsupported-media-type: the body is not application/json";
    public static final String NOT_ACCEPTABLE = "not-acceptable: the Accept header does not admit application/json "
            + "(errors are application/problem+json whatever it says); decided before anything runs";
    public static final String URI_TOO_LONG = "uri-too-long: the request target exceeds ledger.request.max-uri-length (4096)";
    public static final String HEADERS_TOO_LARGE = "headers-too-large: the headers exceed ledger.request.max-header-bytes (16 KiB)";
    public static final String EXPECTATION = "expectation-failed: an Expect header other than 100-continue";
    public static final String KEY_REUSED = "idempotency-key-reused: the key was used for another method, path or body";
    /** The security scheme every /accounts operation requires. */
    public static final String API_KEY = "apiKey";
    public static final String API_KEY_TEXT = "Authorization: Bearer <api-key>. Keys are configured by the operator "
            + "(ledger.api-keys, as client-id:sha256hex); the key decides which client's accounts and Idempotency-Keys "
            + "a request sees. Another client's account does not exist for the caller (404 account-not-found).";
    public static final String UNAUTHORIZED = "unauthorized: the API key is missing, malformed or unknown "
            + "(WWW-Authenticate: Bearer realm=\"ledger\"); nothing is reserved or recorded";
    public static final String UNAVAILABLE = "service-unavailable: the database is unavailable or timed out and nothing "
            + "was applied; retry after Retry-After seconds with the same key";

    private OpenApiText() {
    }
}
