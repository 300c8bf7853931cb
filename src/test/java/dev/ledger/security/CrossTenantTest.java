package dev.ledger.security;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.redis.RedisIdempotencyStore;
import dev.ledger.testing.ApiClient;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static dev.ledger.testing.ApiClient.DEV;
import static dev.ledger.testing.ApiClient.OTHER;
import static dev.ledger.testing.ApiClient.newKey;
import static dev.ledger.testing.LedgerApi.transaction;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two clients, every endpoint, every idempotency path (new, replay, replay after Redis forgot,
 * in flight, mismatch) and the key's lookup, in both directions. Each case states what the other client must get; a
 * leak is any answer that differs: seeing the owner's account, data or recorded answer, or being
 * blocked by the owner's key. The owner's data must stay as it was. Every test asserts zero leaks.
 */
@QuarkusTest
class CrossTenantTest {
    private static final AtomicInteger CASES = new AtomicInteger();
    private static final List<String> ALL_LEAKS = new ArrayList<>();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<String> leaks = new ArrayList<>();

    @Inject
    RedisDataSource redis;

    /** Owner and stranger, both ways round. */
    static Stream<Arguments> pairs() {
        return Stream.of(Arguments.of(DEV, OTHER), Arguments.of(OTHER, DEV));
    }

    private void check(String situation, boolean held, Response evidence) {
        CASES.incrementAndGet();
        if (!held) {
            leaks.add(situation + " -> " + evidence.statusCode() + " " + evidence.headers().getValue("Idempotent-Replayed")
                    + " " + evidence.asString());
        }
    }

    @AfterEach
    void noLeaks() {
        ALL_LEAKS.addAll(leaks);
        assertEquals(List.of(), leaks, leaks.size() + " cross-tenant leak(s)");
    }

    @AfterAll
    static void report() {
        System.out.printf("Cross-tenant matrix: %d cases, %d leaks%n", CASES.get(), ALL_LEAKS.size());
    }

    /** What this client gets for an account that does not exist at all: the answer a stranger must get too. */
    private static String notFoundBody(ApiClient client) {
        Response none = client.account(UUID.randomUUID().toString());
        assertEquals(404, none.statusCode());
        return none.asString();
    }

    private static boolean isAccountNotFound(Response response, String expectedBody) {
        return response.statusCode() == 404 && "/problems/account-not-found".equals(response.path("type"))
                && response.asString().equals(expectedBody);
    }

    private static boolean fresh(Response response) {
        return response.getHeader("Idempotent-Replayed") == null;
    }

    private static boolean replayed(Response response) {
        return "true".equals(response.getHeader("Idempotent-Replayed"));
    }

    private static boolean mentions(Response response, String... values) {
        for (String value : values) {
            if (response.asString().contains(value)) {
                return true;
            }
        }
        return false;
    }

    /** Holds a key as an in-flight request of {@code client} would, through the same scope and fingerprint. */
    private String holdInFlight(ApiClient client, String key, String path, String body) throws Exception {
        IdempotentRequest inFlight = IdempotentRequest.of(client.id(), new IdempotencyKey(key), "POST", path, JSON.readTree(body));
        redis.hash(String.class).hset(RedisIdempotencyStore.key(inFlight),
                Map.of("state", "PROCESSING", "fp", inFlight.fingerprint().hex(), "owner", "someone-else"));
        redis.key().pexpire(RedisIdempotencyStore.key(inFlight), 20_000);
        return RedisIdempotencyStore.key(inFlight);
    }

    @ParameterizedTest
    @MethodSource("pairs")
    void anotherClientsAccountDoesNotExistOnAnyEndpoint(ApiClient owner, ApiClient stranger) {
        String reference = "ref-" + UUID.randomUUID();
        String account = owner.newAccount();
        Response credit = owner.postTransaction(account, newKey(),
                "{\"type\":\"CREDIT\",\"amount\":5000,\"sequence\":3,\"reference\":\"" + reference + "\"}");
        String transactionId = credit.path("id");
        String notFound = notFoundBody(stranger);

        Response read = stranger.account(account);
        check("GET account", isAccountNotFound(read, notFound), read);
        Response list = stranger.transactions(account);
        check("GET transactions", isAccountNotFound(list, notFound) && !mentions(list, transactionId, reference), list);
        Response page = stranger.given().queryParam("after", 0).queryParam("limit", 1).get("/accounts/" + account + "/transactions");
        check("GET transactions page", isAccountNotFound(page, notFound), page);
        Response one = stranger.transaction(account, transactionId);
        check("GET one transaction", isAccountNotFound(one, notFound) && !mentions(one, reference), one);
        Response unknownTx = stranger.transaction(account, UUID.randomUUID().toString());
        check("GET unknown transaction of the account", isAccountNotFound(unknownTx, notFound), unknownTx);

        // the owner's transaction through the stranger's own account
        String own = stranger.newAccount();
        Response through = stranger.transaction(own, transactionId);
        check("GET the transaction through an own account", through.statusCode() == 404
                && "/problems/transaction-not-found".equals(through.path("type")) && !mentions(through, reference), through);

        // POSTs that would apply, overdraw, or be stale for the owner: each would reveal something
        for (String[] post : new String[][]{
                {"POST credit", transaction("CREDIT", 1, 4)},
                {"POST debit beyond the balance", transaction("DEBIT", 999_999, 4)},
                {"POST stale sequence", transaction("CREDIT", 1, 2)}}) {
            String key = newKey();
            Response first = stranger.postTransaction(account, key, post[1]);
            Response expected = stranger.postTransaction(UUID.randomUUID().toString(), newKey(), post[1]);
            check(post[0], first.statusCode() == 404 && first.asString().equals(expected.asString()) && fresh(first)
                    && !mentions(first, "5000", "lastSequence", "balance"), first);
            Response replay = stranger.postTransaction(account, key, post[1]);
            check(post[0] + ", replayed", replay.statusCode() == 404 && replayed(replay)
                    && replay.asString().equals(first.asString()), replay);
        }

        // the owner's account is as it was
        Response after = owner.account(account);
        check("owner's account unchanged", after.statusCode() == 200 && owner.balance(account) == 5000
                && owner.lastSequence(account) == 3 && owner.entryCount(account) == 1, after);
    }

    @ParameterizedTest
    @MethodSource("pairs")
    void theSameKeyOpensOneAccountPerClient(ApiClient owner, ApiClient stranger) {
        String key = newKey();
        Response ownerFirst = owner.openAccount(key, "EUR");
        String ownerAccount = ownerFirst.path("id");
        Response strangerFirst = stranger.openAccount(key, "EUR");
        String strangerAccount = strangerFirst.path("id");
        check("new: the stranger's first request executes", strangerFirst.statusCode() == 201 && fresh(strangerFirst)
                && !ownerAccount.equals(strangerAccount) && !mentions(strangerFirst, ownerAccount), strangerFirst);

        Response ownerReplay = owner.openAccount(key, "EUR");
        check("replay: the owner gets its own answer", replayed(ownerReplay) && ownerReplay.asString().equals(ownerFirst.asString()), ownerReplay);
        Response strangerReplay = stranger.openAccount(key, "EUR");
        check("replay: the stranger gets its own answer", replayed(strangerReplay)
                && strangerReplay.asString().equals(strangerFirst.asString()), strangerReplay);

        redis.execute("FLUSHDB"); // Redis forgets: the answers come from Postgres (the tests' own database)
        Response ownerDurable = owner.openAccount(key, "EUR");
        check("replay from Postgres: the owner gets its own answer", replayed(ownerDurable)
                && ownerDurable.asString().equals(ownerFirst.asString()), ownerDurable);
        Response strangerDurable = stranger.openAccount(key, "EUR");
        check("replay from Postgres: the stranger gets its own answer", replayed(strangerDurable)
                && strangerDurable.asString().equals(strangerFirst.asString()), strangerDurable);

        Response strangerReadsOwners = stranger.account(ownerAccount);
        check("the stranger cannot read the owner's account", strangerReadsOwners.statusCode() == 404, strangerReadsOwners);
        Response ownerReadsStrangers = owner.account(strangerAccount);
        check("the owner cannot read the stranger's account", ownerReadsStrangers.statusCode() == 404, ownerReadsStrangers);
    }

    @ParameterizedTest
    @MethodSource("pairs")
    void theSameKeyOnTheSameTransactionPathIsTwoKeys(ApiClient owner, ApiClient stranger) {
        String account = owner.newAccount();
        String body = transaction("CREDIT", 250, 1);

        // owner first: the stranger must not receive the owner's recorded 201
        String key = newKey();
        Response ownerFirst = owner.postTransaction(account, key, body);
        String transactionId = ownerFirst.path("id");
        Response strangerFirst = stranger.postTransaction(account, key, body);
        check("new, owner first: the stranger's request executes (404)", strangerFirst.statusCode() == 404
                && fresh(strangerFirst) && !mentions(strangerFirst, transactionId, account), strangerFirst);
        Response strangerReplay = stranger.postTransaction(account, key, body);
        check("replay: the stranger gets its own 404", strangerReplay.statusCode() == 404 && replayed(strangerReplay)
                && !mentions(strangerReplay, transactionId), strangerReplay);

        // stranger first: the owner must not receive the stranger's recorded 404
        String second = newKey();
        String secondBody = transaction("CREDIT", 750, 2);
        Response strangerEarly = stranger.postTransaction(account, second, secondBody);
        Response ownerLate = owner.postTransaction(account, second, secondBody);
        check("new, stranger first: the owner's request executes (201)", strangerEarly.statusCode() == 404
                && ownerLate.statusCode() == 201 && fresh(ownerLate), ownerLate);

        redis.execute("FLUSHDB");
        Response strangerDurable = stranger.postTransaction(account, key, body);
        check("replay from Postgres: the stranger gets its own 404", strangerDurable.statusCode() == 404
                && replayed(strangerDurable) && strangerDurable.asString().equals(strangerFirst.asString()), strangerDurable);
        Response ownerDurable = owner.postTransaction(account, key, body);
        check("replay from Postgres: the owner gets its own 201", ownerDurable.statusCode() == 201 && replayed(ownerDurable)
                && ownerDurable.asString().equals(ownerFirst.asString()), ownerDurable);
        Response ownerLateDurable = owner.postTransaction(account, second, secondBody);
        check("replay from Postgres: the owner's late key is its 201", ownerLateDurable.statusCode() == 201
                && replayed(ownerLateDurable) && ownerLateDurable.asString().equals(ownerLate.asString()), ownerLateDurable);

        Response state = owner.account(account);
        check("owner's account has exactly its two credits", owner.balance(account) == 1000 && owner.entryCount(account) == 2, state);
    }

    @ParameterizedTest
    @MethodSource("pairs")
    void anotherClientsInFlightKeyDoesNotBlock(ApiClient owner, ApiClient stranger) throws Exception {
        String key = newKey();
        String body = "{\"currency\":\"CHF\"}";
        String held = holdInFlight(owner, key, "/accounts", body);

        Response ownerDuplicate = owner.openAccount(key, "CHF");
        check("in flight: the owner's duplicate waits (control)", ownerDuplicate.statusCode() == 409
                && "/problems/request-in-progress".equals(ownerDuplicate.path("type")), ownerDuplicate);
        Response strangerFirst = stranger.openAccount(key, "CHF");
        check("in flight: the stranger's request executes", strangerFirst.statusCode() == 201 && fresh(strangerFirst), strangerFirst);
        Response strangerOtherBody = stranger.openAccount(key, "JPY");
        check("in flight: the stranger's mismatch is judged on its own key", strangerOtherBody.statusCode() == 422
                && "/problems/idempotency-key-reused".equals(strangerOtherBody.path("type")), strangerOtherBody);

        redis.key().del(held);
        Response ownerAfterwards = owner.openAccount(key, "CHF");
        check("released: the owner executes afresh, not the stranger's answer", ownerAfterwards.statusCode() == 201
                && fresh(ownerAfterwards) && !ownerAfterwards.<String>path("id").equals(strangerFirst.path("id")), ownerAfterwards);

        // the same on a transaction path: the owner holds a key on its own account
        String account = owner.newAccount();
        String txKey = newKey();
        String txBody = transaction("CREDIT", 10, 1);
        String txHeld = holdInFlight(owner, txKey, "/accounts/" + account + "/transactions", txBody);
        Response ownerTxDuplicate = owner.postTransaction(account, txKey, txBody);
        check("in flight (transaction): the owner's duplicate waits (control)", ownerTxDuplicate.statusCode() == 409, ownerTxDuplicate);
        Response strangerTx = stranger.postTransaction(account, txKey, txBody);
        check("in flight (transaction): the stranger is answered, 404 not 409", strangerTx.statusCode() == 404
                && "/problems/account-not-found".equals(strangerTx.path("type")) && fresh(strangerTx), strangerTx);
        redis.key().del(txHeld);
        Response ownerTx = owner.postTransaction(account, txKey, txBody);
        check("released (transaction): the owner applies", ownerTx.statusCode() == 201 && fresh(ownerTx)
                && owner.balance(account) == 10, ownerTx);
    }

    /** A lookup of the owner's key by the stranger: what the stranger gets for a key nobody used. */
    private boolean isUnknownKey(ApiClient stranger, Response lookup) {
        Response unknown = stranger.lookup(newKey());
        return lookup.statusCode() == 404 && "/problems/idempotency-key-not-found".equals(lookup.path("type"))
                && lookup.asString().equals(unknown.asString());
    }

    @ParameterizedTest
    @MethodSource("pairs")
    void anotherClientsKeyDoesNotExistForALookup(ApiClient owner, ApiClient stranger) throws Exception {
        String account = owner.newAccount();
        String completed = newKey();
        Response credit = owner.postTransaction(account, completed, transaction("CREDIT", 60, 1));
        String refused = newKey();
        owner.postTransaction(account, refused, transaction("DEBIT", 61, 2));
        String inFlight = newKey();
        String held = holdInFlight(owner, inFlight, "/accounts", "{\"currency\":\"CHF\"}");

        for (String key : List.of(completed, refused, inFlight)) {
            Response own = owner.lookup(key);
            check("lookup: the owner finds its own key (control)", own.statusCode() == 200, own);
            Response strangers = stranger.lookup(key);
            check("lookup: the owner's key does not exist for the stranger", isUnknownKey(stranger, strangers)
                    && !mentions(strangers, account, credit.path("id")), strangers);
        }
        check("lookup: the owner's key is in flight (control)", "in-flight".equals(owner.lookup(inFlight).path("state")),
                owner.lookup(inFlight));

        redis.execute("FLUSHDB"); // from PostgreSQL alone, the same
        Response durable = stranger.lookup(completed);
        check("lookup from PostgreSQL: the owner's key does not exist for the stranger", isUnknownKey(stranger, durable), durable);

        // the same key used by the stranger is the stranger's own key, with its own answer
        Response strangerFirst = stranger.postTransaction(account, completed, transaction("CREDIT", 60, 1));
        Response strangers = stranger.lookup(completed);
        check("lookup: the stranger's use of the key is its own (404 recorded, no Location)", strangerFirst.statusCode() == 404
                && strangers.statusCode() == 200 && Integer.valueOf(404).equals(strangers.path("status"))
                && strangers.path("location") == null, strangers);
        Response owners = owner.lookup(completed);
        check("lookup: the owner's key is still its 201", Integer.valueOf(201).equals(owners.path("status"))
                && credit.header("Location").equals(owners.path("location")), owners);
        redis.key().del(held);
    }

    @ParameterizedTest
    @MethodSource("pairs")
    void anotherClientsBodyIsNoMismatch(ApiClient owner, ApiClient stranger) {
        String key = newKey();
        Response ownerFirst = owner.openAccount(key, "EUR");
        Response strangerOtherBody = stranger.openAccount(key, "GBP");
        check("mismatch: another client's key with another body executes", strangerOtherBody.statusCode() == 201
                && fresh(strangerOtherBody) && "GBP".equals(strangerOtherBody.path("currency")), strangerOtherBody);
        Response ownerOtherBody = owner.openAccount(key, "GBP");
        check("mismatch: the owner's own reuse is refused (control)", ownerOtherBody.statusCode() == 422
                && "/problems/idempotency-key-reused".equals(ownerOtherBody.path("type")), ownerOtherBody);
        Response strangerOwnersBody = stranger.openAccount(key, "EUR");
        check("mismatch: the stranger's reuse is judged on its own record", strangerOwnersBody.statusCode() == 422
                && !mentions(strangerOwnersBody, ownerFirst.<String>path("id")), strangerOwnersBody);

        redis.execute("FLUSHDB");
        Response strangerDurable = stranger.openAccount(key, "EUR");
        check("mismatch from Postgres: the stranger's reuse is judged on its own record", strangerDurable.statusCode() == 422,
                strangerDurable);
        Response ownerDurable = owner.openAccount(key, "EUR");
        check("mismatch from Postgres: the owner still replays its own answer", replayed(ownerDurable)
                && ownerDurable.asString().equals(ownerFirst.asString()), ownerDurable);
        Response strangerOwnDurable = stranger.openAccount(key, "GBP");
        check("mismatch from Postgres: the stranger still replays its own answer", replayed(strangerOwnDurable)
                && strangerOwnDurable.asString().equals(strangerOtherBody.asString()), strangerOwnDurable);
        assertTrue(CASES.get() > 0);
    }
}
