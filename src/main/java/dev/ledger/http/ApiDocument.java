package dev.ledger.http;

import dev.ledger.problem.Problem;
import dev.ledger.problem.ProblemType;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.media.MediaType;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static dev.ledger.problem.ProblemType.*;

/**
 * The parts of the OpenAPI document that every operation shares, written once (applied while the
 * application is built): the idempotency policy as the document's description, the
 * {@code Problem} schema as the service sends it, and each operation's error answers — status,
 * the problem types it can carry, an example of each, and the headers that come with them — from
 * one table, {@link #ERRORS}. The operations' own annotations describe only their success.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class ApiDocument implements OASFilter {
    public static final String PROBLEM_SCHEMA = "Problem";

    /** What each operation can answer besides its success, by operationId. */
    static final Map<String, List<ProblemType>> ERRORS = Map.ofEntries(Map.entry(
            "openAccount", List.of(INVALID_REQUEST, IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, UNAUTHORIZED,
                    NOT_ACCEPTABLE, REQUEST_IN_PROGRESS, PAYLOAD_TOO_LARGE, URI_TOO_LONG, UNSUPPORTED_MEDIA_TYPE,
                    EXPECTATION_FAILED, IDEMPOTENCY_KEY_REUSED, HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("postTransaction", List.of(INVALID_REQUEST, IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, UNAUTHORIZED,
                    ACCOUNT_NOT_FOUND, NOT_ACCEPTABLE, STALE_SEQUENCE, REQUEST_IN_PROGRESS, PAYLOAD_TOO_LARGE, URI_TOO_LONG,
                    UNSUPPORTED_MEDIA_TYPE, EXPECTATION_FAILED, INSUFFICIENT_FUNDS, BALANCE_LIMIT_EXCEEDED,
                    IDEMPOTENCY_KEY_REUSED, HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("getAccount", List.of(UNAUTHORIZED, ACCOUNT_NOT_FOUND, NOT_ACCEPTABLE, URI_TOO_LONG, HEADERS_TOO_LARGE,
                    INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("listTransactions", List.of(INVALID_REQUEST, UNAUTHORIZED, ACCOUNT_NOT_FOUND, NOT_ACCEPTABLE, URI_TOO_LONG,
                    HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("getTransaction", List.of(UNAUTHORIZED, ACCOUNT_NOT_FOUND, TRANSACTION_NOT_FOUND, NOT_ACCEPTABLE, URI_TOO_LONG,
                    HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("createTransfer", List.of(INVALID_REQUEST, IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, UNAUTHORIZED,
                    ACCOUNT_NOT_FOUND, NOT_ACCEPTABLE, STALE_SEQUENCE, REQUEST_IN_PROGRESS, PAYLOAD_TOO_LARGE, URI_TOO_LONG,
                    UNSUPPORTED_MEDIA_TYPE, EXPECTATION_FAILED, CURRENCY_MISMATCH, INSUFFICIENT_FUNDS, BALANCE_LIMIT_EXCEEDED,
                    IDEMPOTENCY_KEY_REUSED, HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("postTransfer", List.of(INVALID_REQUEST, IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, UNAUTHORIZED,
                    TRANSFER_NOT_FOUND, NOT_ACCEPTABLE, TRANSFER_ALREADY_POSTED, TRANSFER_ALREADY_VOIDED, TRANSFER_EXPIRED,
                    TRANSFER_NOT_PENDING, STALE_SEQUENCE, REQUEST_IN_PROGRESS, PAYLOAD_TOO_LARGE, URI_TOO_LONG,
                    UNSUPPORTED_MEDIA_TYPE, EXPECTATION_FAILED, AMOUNT_EXCEEDS_PENDING, BALANCE_LIMIT_EXCEEDED,
                    IDEMPOTENCY_KEY_REUSED, HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("voidTransfer", List.of(INVALID_REQUEST, IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, UNAUTHORIZED,
                    TRANSFER_NOT_FOUND, NOT_ACCEPTABLE, TRANSFER_ALREADY_POSTED, TRANSFER_ALREADY_VOIDED, TRANSFER_EXPIRED,
                    TRANSFER_NOT_PENDING, REQUEST_IN_PROGRESS, PAYLOAD_TOO_LARGE, URI_TOO_LONG, UNSUPPORTED_MEDIA_TYPE,
                    EXPECTATION_FAILED, IDEMPOTENCY_KEY_REUSED, HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("reverseTransfer", List.of(INVALID_REQUEST, IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, UNAUTHORIZED,
                    TRANSFER_NOT_FOUND, NOT_ACCEPTABLE, TRANSFER_NOT_POSTED, STALE_SEQUENCE, REQUEST_IN_PROGRESS,
                    PAYLOAD_TOO_LARGE, URI_TOO_LONG, UNSUPPORTED_MEDIA_TYPE, EXPECTATION_FAILED, REVERSAL_EXCEEDS_TRANSFER,
                    INSUFFICIENT_FUNDS, BALANCE_LIMIT_EXCEEDED, IDEMPOTENCY_KEY_REUSED, HEADERS_TOO_LARGE, INTERNAL_ERROR,
                    SERVICE_UNAVAILABLE)),
            Map.entry("getTransfer", List.of(UNAUTHORIZED, TRANSFER_NOT_FOUND, NOT_ACCEPTABLE, URI_TOO_LONG, HEADERS_TOO_LARGE,
                    INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("getIdempotencyKey", List.of(IDEMPOTENCY_KEY_INVALID, UNAUTHORIZED, IDEMPOTENCY_KEY_NOT_FOUND, NOT_ACCEPTABLE,
                    URI_TOO_LONG, HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)),
            Map.entry("moveClient", List.of(INVALID_REQUEST, UNAUTHORIZED, NOT_FOUND, NOT_ACCEPTABLE, PAYLOAD_TOO_LARGE,
                    URI_TOO_LONG, UNSUPPORTED_MEDIA_TYPE, HEADERS_TOO_LARGE, INTERNAL_ERROR, SERVICE_UNAVAILABLE)));

    /** The refusals a POST records with its key: a retry gets them again, as a replay. */
    static final Set<ProblemType> RECORDED = Set.of(ACCOUNT_NOT_FOUND, STALE_SEQUENCE, INSUFFICIENT_FUNDS, BALANCE_LIMIT_EXCEEDED,
            TRANSFER_NOT_FOUND, TRANSFER_ALREADY_POSTED, TRANSFER_ALREADY_VOIDED, TRANSFER_EXPIRED, TRANSFER_NOT_PENDING,
            TRANSFER_NOT_POSTED, CURRENCY_MISMATCH, AMOUNT_EXCEEDS_PENDING, REVERSAL_EXCEEDS_TRANSFER);

    @Override
    public void filterOpenAPI(OpenAPI api) {
        if (api.getInfo() == null) {
            api.setInfo(OASFactory.createInfo());
        }
        api.getInfo().description(OpenApiText.POLICY + "\n\n" + problemTable());
        api.getTags().forEach(tag -> tag.description(switch (tag.getName()) {
            case "Accounts" -> "Open an account (one currency, a balance in minor units) and read it";
            case "Transactions" -> "Post debits and credits, each applied at most once; list and read them";
            case "Idempotency keys" -> "What became of a key: its request's recorded answer, or that it is in flight";
            case "Transfers" -> "Move money between two of the caller's accounts at once, or hold it and post or void the "
                    + "hold later; give back a posted transfer; read a transfer";
            case "Operations" -> "What an operator does to a running ledger: move a client to another shard";
            default -> throw new IllegalStateException("No description for tag " + tag.getName());
        }));
        api.getComponents().addSchema(PROBLEM_SCHEMA, problemSchema());
        // The enum the Problem class's field would have produced: the service sends URIs, not these names.
        api.getComponents().removeSchema(ProblemType.class.getSimpleName());
        api.getPaths().getPathItems().values().forEach(path -> path.getOperations().values().forEach(this::addErrors));
    }

    private void addErrors(Operation operation) {
        List<ProblemType> errors = ERRORS.get(operation.getOperationId());
        if (errors == null) {
            throw new IllegalStateException("No error answers listed for operation " + operation.getOperationId());
        }
        boolean post = errors.contains(IDEMPOTENCY_KEY_MISSING);
        APIResponses responses = operation.getResponses();
        Map<Integer, List<ProblemType>> byStatus = errors.stream()
                .collect(Collectors.groupingBy(ProblemType::status, TreeMap::new, Collectors.toList()));
        byStatus.forEach((status, types) -> responses.addAPIResponse(Integer.toString(status), response(types, post)));
        if (post) {
            operation.addParameter(OASFactory.createParameter().name(PreferWait.PREFER).in(Parameter.In.HEADER)
                    .description(OpenApiText.PREFER_TEXT)
                    .schema(OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING)).example("wait=10")));
            // the success: 201 for what creates, 200 for a change of a transfer
            responses.getAPIResponses().entrySet().stream().filter(entry -> entry.getKey().startsWith("2"))
                    .forEach(entry -> entry.getValue().addHeader(PreferWait.APPLIED, preferenceAppliedHeader())
                            .addHeader(OpenApiText.EXPIRES, expiresHeader()));
        }
    }

    /** The header of an answer that came after waiting for an in-flight original ({@code Prefer: wait}). */
    private static Header preferenceAppliedHeader() {
        return header("`wait=N` when the request waited (`Prefer: wait=N`, N capped) for an in-flight original with its "
                + "key and this is the answer it then got", OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING))
                .pattern("^wait=[0-9]+$"));
    }

    private static APIResponse response(List<ProblemType> types, boolean post) {
        MediaType media = OASFactory.createMediaType()
                .schema(OASFactory.createSchema().ref(PROBLEM_SCHEMA));
        for (ProblemType type : types) {
            media.addExample(type.slug(), OASFactory.createExample()
                    .summary(type.title())
                    .value(example(type)));
        }
        APIResponse response = OASFactory.createAPIResponse()
                .description(types.stream().map(type -> "`" + type.slug() + "`: " + meaning(type)
                                + (post && RECORDED.contains(type) ? " Recorded with the key and replayed." : ""))
                        .collect(Collectors.joining("\n\n")))
                .content(OASFactory.createContent().addMediaType(Problem.MEDIA_TYPE, media));
        if (post && types.stream().anyMatch(RECORDED::contains)) {
            response.addHeader(OpenApiText.REPLAYED, replayedHeader());
            response.addHeader(PreferWait.APPLIED, preferenceAppliedHeader());
            response.addHeader(OpenApiText.EXPIRES, expiresHeader());
        }
        if (types.contains(REQUEST_IN_PROGRESS) || types.contains(SERVICE_UNAVAILABLE)) {
            response.addHeader("Retry-After", header("Seconds to wait before retrying: the remaining lease (at least 1) "
                    + "for request-in-progress, 1 for service-unavailable", OASFactory.createSchema()
                    .type(List.of(Schema.SchemaType.INTEGER)).minimum(java.math.BigDecimal.ONE)));
        }
        if (types.contains(UNAUTHORIZED)) {
            response.addHeader("WWW-Authenticate", header("The challenge: `Bearer realm=\"ledger\"`",
                    OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING))));
        }
        return response;
    }

    /** The header every recorded answer carries, first and replayed alike; never one nothing was recorded for. */
    public static Header expiresHeader() {
        return header(OpenApiText.EXPIRES_TEXT, OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING))
                .pattern(OpenApiText.HTTP_DATE_PATTERN).example("Sat, 22 Nov 2026 10:00:01 GMT"));
    }

        /** The header a replayed answer carries, success or recorded refusal alike. */
    public static Header replayedHeader() {
        return header(OpenApiText.REPLAYED_TEXT, OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING))
                .enumeration(List.of("true")));
    }

    private static Header header(String description, Schema schema) {
        return OASFactory.createHeader().description(description).schema(schema);
    }

    /** What a problem type means and what the client can do about it. */
    static String meaning(ProblemType type) {
        return switch (type) {
            case INVALID_REQUEST -> "The body, a query parameter or the JSON is invalid (malformed JSON or UTF-8, a member "
                    + "missing, of the wrong type, out of range or unknown); `detail` says which. Nothing was reserved.";
            case IDEMPOTENCY_KEY_MISSING -> "A POST without an `Idempotency-Key` header.";
            case IDEMPOTENCY_KEY_INVALID -> "The `Idempotency-Key` (a POST's header, or the key in a lookup's path) is empty, "
                    + "longer than 255 characters, or not visible ASCII; in a path, a key in quotes is malformed.";
            case UNAUTHORIZED -> "The API key is missing, malformed or unknown. Nothing was reserved or recorded.";
            case ACCOUNT_NOT_FOUND -> "No such account for this client (unknown, not a UUID, or another client's). A transfer's "
                    + "names the account in `accountId`.";
            case TRANSFER_NOT_FOUND -> "No such transfer for this client (unknown, not a UUID, or another client's).";
            case TRANSFER_ALREADY_POSTED -> "The hold was posted already.";
            case TRANSFER_ALREADY_VOIDED -> "The hold was voided already.";
            case TRANSFER_EXPIRED -> "The hold reached its `expiresAt` and is released (whether or not anything had released it).";
            case TRANSFER_NOT_PENDING -> "The transfer was posted when it was made: there is no hold to settle.";
            case TRANSFER_NOT_POSTED -> "Only a posted transfer can be reversed (this one is a hold, pending, voided or expired).";
            case CURRENCY_MISMATCH -> "The two accounts of a transfer hold different currencies.";
            case AMOUNT_EXCEEDS_PENDING -> "The post's `amount` is larger than the hold (reported as `pendingAmount`).";
            case REVERSAL_EXCEEDS_TRANSFER -> "The reversal's `amount` is larger than what is left to give back, or nothing "
                    + "is left (reported as `reversibleAmount`).";
            case TRANSACTION_NOT_FOUND -> "The account is the caller's, but this transaction is not in it.";
            case IDEMPOTENCY_KEY_NOT_FOUND -> "The caller has no such key: never used, expired, or only another client's. "
                    + "A request still in flight is found while the store (Redis) answers; without it, only what is recorded.";
            case NOT_FOUND -> "No resource at this path.";
            case METHOD_NOT_ALLOWED -> "The path does not take this method; `Allow` lists those it takes.";
            case NOT_ACCEPTABLE -> "The `Accept` header does not admit `application/json`, the type of every success "
                    + "answer (errors are `application/problem+json` whatever it says). Nothing was executed.";
            case URI_TOO_LONG -> "The request target is longer than 4096 characters (`ledger.request.max-uri-length`).";
            case EXPECTATION_FAILED -> "An `Expect` header other than `100-continue`.";
            case HEADERS_TOO_LARGE -> "The request headers take more than 16 KiB (`ledger.request.max-header-bytes`).";
            case REQUEST_IN_PROGRESS -> "A request with this key is still in flight; retry after `Retry-After` seconds. "
                    + "Not recorded.";
            case STALE_SEQUENCE -> "`sequence` is not greater than the account's `lastSequence` (reported as `lastSequence`; "
                    + "for a transfer's leg, with the account as `accountId`).";
            case PAYLOAD_TOO_LARGE -> "The body is larger than 64 KiB (`ledger.request.max-body-bytes`).";
            case UNSUPPORTED_MEDIA_TYPE -> "The body is not declared `application/json` (UTF-8).";
            case IDEMPOTENCY_KEY_REUSED -> "The key was already used by this client for another method, path or body. "
                    + "Not recorded: the original's answer stays the key's answer.";
            case INSUFFICIENT_FUNDS -> "The debit, transfer or hold is larger than the account's `available` (balance less "
                    + "its live holds; reported as `available`, with `balance`).";
            case BALANCE_LIMIT_EXCEEDED -> "The credit would take the balance (with a hold: with its pending credits) past "
                    + "9223372036854775807 (the balance is reported as `balance`).";
            case INTERNAL_ERROR -> "A bug: `detail` names an incident id to report. Not recorded; a retry with the same key "
                    + "executes again, at most once.";
            case SERVICE_UNAVAILABLE -> "PostgreSQL or Redis is unavailable or timed out. The request may or may not have been "
                    + "applied: retry with the same key, which applies it at most once and answers its outcome.";
        };
    }

    /** A problem body as the service sends it for {@code type}. */
    static Map<String, Object> example(ProblemType type) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", type.uri());
        body.put("title", type.title());
        body.put("status", type.status());
        // Details as the service writes them (the ones that name a value show a typical one).
        body.put("detail", switch (type) {
            case INVALID_REQUEST -> "Unknown member 'ammount'; allowed: type, amount, sequence, reference";
            case IDEMPOTENCY_KEY_MISSING -> "Every POST needs an Idempotency-Key header";
            case IDEMPOTENCY_KEY_INVALID -> "Malformed Idempotency-Key: the key is longer than 255 characters";
            case UNAUTHORIZED -> "The API key is not valid";
            case ACCOUNT_NOT_FOUND -> "No such account";
            case TRANSFER_NOT_FOUND -> "No such transfer";
            case TRANSFER_ALREADY_POSTED -> "The hold was posted already";
            case TRANSFER_ALREADY_VOIDED -> "The hold was voided already";
            case TRANSFER_EXPIRED -> "The hold expired and was released";
            case TRANSFER_NOT_PENDING -> "The transfer was posted when it was made: there is no hold to settle";
            case TRANSFER_NOT_POSTED -> "Only a posted transfer can be reversed; this one is a hold, pending, voided or expired";
            case CURRENCY_MISMATCH -> "The two accounts hold different currencies";
            case AMOUNT_EXCEEDS_PENDING -> "Post of 1500 exceeds the hold's pending amount 1250";
            case REVERSAL_EXCEEDS_TRANSFER -> "Reversal of 800 exceeds what is left to reverse, 750";
            case TRANSACTION_NOT_FOUND -> "No such transaction in this account";
            case IDEMPOTENCY_KEY_NOT_FOUND -> "No such Idempotency-Key: never used, or expired";
            case NOT_FOUND -> "No resource at this path";
            case METHOD_NOT_ALLOWED -> "This method is not allowed on this path";
            case NOT_ACCEPTABLE -> "This API answers in application/json (errors in application/problem+json), which the "
                    + "Accept header does not admit";
            case URI_TOO_LONG -> "The request target is 5000 characters long; at most 4096 are accepted";
            case EXPECTATION_FAILED -> "The only expectation this API meets is Expect: 100-continue";
            case HEADERS_TOO_LARGE -> "The request headers take 20000 bytes; at most 16384 are accepted";
            case REQUEST_IN_PROGRESS -> "A request with this Idempotency-Key is still being processed; retry after it completes";
            case STALE_SEQUENCE -> "Sequence 17 is not greater than the account's last sequence 17";
            case PAYLOAD_TOO_LARGE -> "The request body is 70000 bytes; at most 65536 are accepted";
            case UNSUPPORTED_MEDIA_TYPE -> "Request bodies must be application/json (UTF-8)";
            case IDEMPOTENCY_KEY_REUSED -> "This Idempotency-Key was already used for a different request (method, path or body)";
            case INSUFFICIENT_FUNDS -> "Debit of 1250 exceeds the available balance 900 (balance 1000)";
            case BALANCE_LIMIT_EXCEEDED -> "Credit of 10 would take balance 9223372036854775800 past the largest balance "
                    + "9223372036854775807";
            case INTERNAL_ERROR -> "Unexpected failure; incident 0f6b3c9e-6d1a-4d4e-9a43-2a4f1c7b5e21";
            case SERVICE_UNAVAILABLE -> "The ledger database did not confirm this request in time; it may or may not have "
                    + "been applied. Retry with the same Idempotency-Key: it is applied at most once, and the retry answers "
                    + "with its outcome";
        });
        switch (type) {
            case STALE_SEQUENCE -> body.put("lastSequence", 17);
            case INSUFFICIENT_FUNDS -> {
                body.put("balance", 1000);
                body.put("available", 900);
            }
            case AMOUNT_EXCEEDS_PENDING -> body.put("pendingAmount", 1250);
            case REVERSAL_EXCEEDS_TRANSFER -> body.put("reversibleAmount", 750);
            case BALANCE_LIMIT_EXCEEDED -> body.put("balance", 9223372036854775800L);
            default -> {
            }
        }
        return body;
    }

    /** RFC 9457 as this service fills it: {@code type} is one of its slugs, extension members are top-level. */
    private static Schema problemSchema() {
        Schema string = OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING));
        Schema int64 = OASFactory.createSchema().type(List.of(Schema.SchemaType.INTEGER)).format("int64");
        return OASFactory.createSchema()
                .type(List.of(Schema.SchemaType.OBJECT))
                .description("An RFC 9457 problem (`application/problem+json`). `type` is a URI reference whose last "
                        + "segment is the slug; extension members carry the numbers a client needs to act.")
                .required(List.of("type", "title", "status", "detail"))
                .addProperty("type", OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING)).format("uri-reference")
                        .enumeration(Arrays.stream(ProblemType.values()).map(ProblemType::uri).collect(Collectors.toList())))
                .addProperty("title", string)
                .addProperty("status", OASFactory.createSchema().type(List.of(Schema.SchemaType.INTEGER)).format("int32"))
                .addProperty("detail", string)
                .addProperty("balance", int64.description("insufficient-funds, balance-limit-exceeded: the account's "
                        + "balance in minor units"))
                .addProperty("available", OASFactory.createSchema().type(List.of(Schema.SchemaType.INTEGER)).format("int64")
                        .description("insufficient-funds: the account's balance less its live holds (absent from answers "
                                + "recorded before there were holds)"))
                .addProperty("lastSequence", OASFactory.createSchema().type(List.of(Schema.SchemaType.INTEGER)).format("int64")
                        .description("stale-sequence: the account's lastSequence"))
                .addProperty("accountId", OASFactory.createSchema().type(List.of(Schema.SchemaType.STRING)).format("uuid")
                        .description("a transfer's account-not-found and stale-sequence: which of its accounts"))
                .addProperty("pendingAmount", OASFactory.createSchema().type(List.of(Schema.SchemaType.INTEGER)).format("int64")
                        .description("amount-exceeds-pending: the hold's amount"))
                .addProperty("reversibleAmount", OASFactory.createSchema().type(List.of(Schema.SchemaType.INTEGER)).format("int64")
                        .description("reversal-exceeds-transfer: postedAmount - reversedAmount when it was refused"))
                .additionalPropertiesBoolean(false);
    }

    private static String problemTable() {
        return "| status | `type` | meaning |\n| --- | --- | --- |\n" + Arrays.stream(ProblemType.values())
                .map(type -> "| " + type.status() + " | `" + type.uri() + "` | " + meaning(type) + " |")
                .collect(Collectors.joining("\n"));
    }
}
