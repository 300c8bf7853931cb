package dev.ledger.problem;

/** Every problem the API answers with: HTTP status, the stable {@code type} slug and its title. */
public enum ProblemType {
    INVALID_REQUEST(400, "invalid-request", "Invalid request"),
    IDEMPOTENCY_KEY_MISSING(400, "idempotency-key-missing", "Idempotency-Key header missing"),
    IDEMPOTENCY_KEY_INVALID(400, "idempotency-key-invalid", "Idempotency-Key header invalid"),
    UNAUTHORIZED(401, "unauthorized", "Unauthorized"),
    ACCOUNT_NOT_FOUND(404, "account-not-found", "Account not found"),
    TRANSACTION_NOT_FOUND(404, "transaction-not-found", "Transaction not found"),
    IDEMPOTENCY_KEY_NOT_FOUND(404, "idempotency-key-not-found", "Idempotency key not found"),
    TRANSFER_NOT_FOUND(404, "transfer-not-found", "Transfer not found"),
    NOT_FOUND(404, "not-found", "Not found"),
    METHOD_NOT_ALLOWED(405, "method-not-allowed", "Method not allowed"),
    NOT_ACCEPTABLE(406, "not-acceptable", "Not acceptable"),
    REQUEST_IN_PROGRESS(409, "request-in-progress", "Request in progress"),
    STALE_SEQUENCE(409, "stale-sequence", "Stale sequence"),
    TRANSFER_ALREADY_POSTED(409, "transfer-already-posted", "Transfer already posted"),
    TRANSFER_ALREADY_VOIDED(409, "transfer-already-voided", "Transfer already voided"),
    TRANSFER_EXPIRED(409, "transfer-expired", "Transfer expired"),
    TRANSFER_NOT_PENDING(409, "transfer-not-pending", "Transfer not pending"),
    TRANSFER_NOT_POSTED(409, "transfer-not-posted", "Transfer not posted"),
    PAYLOAD_TOO_LARGE(413, "payload-too-large", "Payload too large"),
    URI_TOO_LONG(414, "uri-too-long", "URI too long"),
    UNSUPPORTED_MEDIA_TYPE(415, "unsupported-media-type", "Unsupported media type"),
    EXPECTATION_FAILED(417, "expectation-failed", "Expectation failed"),
    IDEMPOTENCY_KEY_REUSED(422, "idempotency-key-reused", "Idempotency-Key reused"),
    INSUFFICIENT_FUNDS(422, "insufficient-funds", "Insufficient funds"),
    BALANCE_LIMIT_EXCEEDED(422, "balance-limit-exceeded", "Balance limit exceeded"),
    CURRENCY_MISMATCH(422, "currency-mismatch", "Currency mismatch"),
    AMOUNT_EXCEEDS_PENDING(422, "amount-exceeds-pending", "Amount exceeds pending"),
    REVERSAL_EXCEEDS_TRANSFER(422, "reversal-exceeds-transfer", "Reversal exceeds transfer"),
    HEADERS_TOO_LARGE(431, "headers-too-large", "Request headers too large"),
    INTERNAL_ERROR(500, "internal-error", "Internal error"),
    SERVICE_UNAVAILABLE(503, "service-unavailable", "Service unavailable");

    public static final String PREFIX = "/problems/";

    private final int status;
    private final String slug;
    private final String title;

    ProblemType(int status, String slug, String title) {
        this.status = status;
        this.slug = slug;
        this.title = title;
    }

    public int status() {
        return status;
    }

    public String slug() {
        return slug;
    }

    public String title() {
        return title;
    }

    public String uri() {
        return PREFIX + slug;
    }
}
