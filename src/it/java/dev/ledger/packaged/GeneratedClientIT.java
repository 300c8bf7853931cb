package dev.ledger.packaged;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.ledger.client.ApiClient;
import dev.ledger.client.ApiException;
import dev.ledger.client.ApiResponse;
import dev.ledger.client.api.AccountsApi;
import dev.ledger.client.api.TransactionsApi;
import dev.ledger.client.model.Account;
import dev.ledger.client.model.OpenAccountRequest;
import dev.ledger.client.model.PostTransactionRequest;
import dev.ledger.client.model.Problem;
import dev.ledger.client.model.Transaction;
import dev.ledger.client.model.TransactionPage;
import dev.ledger.client.model.TransactionType;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The packaged application driven by a client that openapi-generator generated, during this very
 * build, from the OpenAPI document the application serves (target/openapi, written when it was
 * packaged): if the document and the service disagree on a path, a parameter, a body or a problem,
 * the generated types cannot read the answers and this test fails. Every refusal is read through
 * the generated {@link Problem}. (It lives in src/it/java: it can only be compiled after the
 * client is generated, after packaging.)
 */
@QuarkusIntegrationTest
@WithTestResource(value = PackagedAppConfig.class, scope = TestResourceScope.MATCHING_RESOURCES)
class GeneratedClientIT {
    /** No {@code Prefer: wait}: the generated methods take the header as their last parameter. */
    private static final String NO_WAIT = null;
    private AccountsApi accounts;
    private TransactionsApi transactions;
    private ApiClient client;

    @BeforeEach
    void connect() throws Exception {
        client = new ApiClient();
        client.updateBaseUri(PackagedAppConfig.baseUrl().toString().replaceFirst("/$", ""));
        client.setRequestInterceptor(request -> request.header("Authorization", PackagedAppConfig.CLIENT.authorization()));
        accounts = new AccountsApi(client);
        transactions = new TransactionsApi(client);
    }

    @Test
    void opensCreditsReplaysAndReadsRefusalsThroughTheGeneratedTypes() throws Exception {
        ApiResponse<Account> opened = accounts.openAccountWithHttpInfo(key(), new OpenAccountRequest().currency("EUR"), NO_WAIT);
        assertEquals(201, opened.getStatusCode());
        Account account = opened.getData();
        assertEquals("EUR", account.getCurrency());
        assertEquals(0L, account.getBalance());

        String creditKey = key();
        PostTransactionRequest credit = new PostTransactionRequest().type(TransactionType.CREDIT).amount(10_000L)
                .sequence(1L).reference("invoice-7");
        ApiResponse<Transaction> applied = transactions.postTransactionWithHttpInfo(account.getId(), creditKey, credit, NO_WAIT);
        assertEquals(201, applied.getStatusCode());
        assertEquals(10_000L, applied.getData().getBalanceAfter());
        assertNull(applied.getHeaders().get("idempotent-replayed"));

        ApiResponse<Transaction> replayed = transactions.postTransactionWithHttpInfo(account.getId(), creditKey, credit, NO_WAIT);
        assertEquals(201, replayed.getStatusCode());
        assertEquals(List.of("true"), replayed.getHeaders().get("idempotent-replayed"));
        assertEquals(applied.getData(), replayed.getData());

        Problem poor = problem(422, () -> transactions.postTransaction(account.getId(), key(),
                new PostTransactionRequest().type(TransactionType.DEBIT).amount(10_001L).sequence(2L), NO_WAIT));
        assertEquals(Problem.TypeEnum._PROBLEMS_INSUFFICIENT_FUNDS, poor.getType());
        assertEquals(10_000L, poor.getBalance());

        Problem stale = problem(409, () -> transactions.postTransaction(account.getId(), key(),
                new PostTransactionRequest().type(TransactionType.CREDIT).amount(1L).sequence(1L), NO_WAIT));
        assertEquals(Problem.TypeEnum._PROBLEMS_STALE_SEQUENCE, stale.getType());
        assertEquals(1L, stale.getLastSequence());

        Problem reused = problem(422, () -> transactions.postTransaction(account.getId(), creditKey,
                new PostTransactionRequest().type(TransactionType.CREDIT).amount(20_000L).sequence(1L), NO_WAIT));
        assertEquals(Problem.TypeEnum._PROBLEMS_IDEMPOTENCY_KEY_REUSED, reused.getType());

        Problem unknown = problem(404, () -> accounts.getAccount(UUID.randomUUID()));
        assertEquals(Problem.TypeEnum._PROBLEMS_ACCOUNT_NOT_FOUND, unknown.getType());

        assertEquals(10_000L, accounts.getAccount(account.getId()).getBalance());
        TransactionPage page = transactions.listTransactions(account.getId(), 0L, 50);
        assertEquals(List.of(applied.getData()), page.getItems());
        assertNull(page.getNext());
        assertEquals(applied.getData(), transactions.getTransaction(account.getId(), applied.getData().getId()));
    }

    private interface Call {
        void run() throws ApiException;
    }

    /** The refusal of {@code call}, which must be {@code status}, read as the generated Problem type. */
    private Problem problem(int status, Call call) throws JsonProcessingException {
        ApiException refused = assertThrows(ApiException.class, call::run);
        assertEquals(status, refused.getCode(), refused.getResponseBody());
        assertEquals(List.of("application/problem+json"), refused.getResponseHeaders().allValues("content-type"));
        Problem problem = client.getObjectMapper().readValue(refused.getResponseBody(), Problem.class);
        assertEquals(status, problem.getStatus());
        return problem;
    }

    private static String key() {
        return "generated-client-" + UUID.randomUUID();
    }
}
