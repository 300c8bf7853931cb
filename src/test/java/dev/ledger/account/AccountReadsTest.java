package dev.ledger.account;

import dev.ledger.testing.EventLoopTurn;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newAccount;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reads of accounts by id, against the real (test) PostgreSQL: what one event-loop turn asks
 * for is one query, and every caller gets the account it asked for, as committed.
 */
@QuarkusTest
class AccountReadsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    AccountReads reads;

    @Inject
    AccountRepository accounts;

    @Inject
    Vertx vertx;

    /** The statements Hibernate sent while {@code action} ran, from its log of each (category org.hibernate.SQL). */
    private static List<String> statementsWhile(Callable<?> action) throws Exception {
        List<String> statements = new CopyOnWriteArrayList<>();
        Logger sql = Logger.getLogger("org.hibernate.SQL");
        Level level = sql.getLevel();
        Handler recorder = new Handler() {
            @Override
            public void publish(LogRecord record) {
                statements.add(record.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        sql.setLevel(Level.FINE);
        sql.addHandler(recorder);
        try {
            action.call();
        } finally {
            sql.removeHandler(recorder);
            sql.setLevel(level);
        }
        return statements;
    }

    @Test
    void oneTurnsReadsShareOneQueryAndEachCallerGetsItsOwnAccount() throws Exception {
        UUID a = UUID.fromString(newAccount());
        UUID b = UUID.fromString(newAccount());
        UUID missing = UUID.randomUUID();
        credit(b.toString(), 700, 1);
        long queries = reads.sendsMade();
        long asked = reads.callsSent();

        List<UUID> ids = List.of(a, b, missing, a);
        List<Object> found = new ArrayList<>();
        List<String> statements = statementsWhile(() -> found.addAll(EventLoopTurn.inOneTurn(vertx, WAIT,
                ids.stream().<Supplier<Uni<?>>>map(id -> () -> reads.read(id)).toList())));

        assertEquals(1, statements.size(), "one statement sent to PostgreSQL for the whole turn: " + statements);
        assertTrue(statements.get(0).contains("any"), statements.get(0));
        assertEquals(1, reads.sendsMade() - queries, "one query for the whole turn");
        assertEquals(ids.size(), reads.callsSent() - asked);
        assertEquals(a, assertInstanceOf(Account.class, found.get(0)).id);
        assertEquals(0, ((Account) found.get(0)).balance);
        assertEquals(b, assertInstanceOf(Account.class, found.get(1)).id);
        assertEquals(700, ((Account) found.get(1)).balance);
        assertEquals(1, ((Account) found.get(1)).lastSequence);
        assertNull(found.get(2), "no such account");
        assertEquals(a, assertInstanceOf(Account.class, found.get(3)).id);
    }

    @Test
    void anAccountIsReadOnlyForItsOwnerInABatchToo() throws Exception {
        UUID mine = UUID.fromString(newAccount()); // opened by the test key's client, "dev"
        long queries = reads.sendsMade();

        List<Object> found = EventLoopTurn.inOneTurn(vertx, WAIT, List.of(
                () -> accounts.readOwned(mine, "dev"),
                () -> accounts.readOwned(mine, "other")));

        assertEquals(1, reads.sendsMade() - queries);
        assertEquals(mine, assertInstanceOf(Account.class, found.get(0)).id);
        assertNull(found.get(1), "another client's account is not found");
    }

    @Test
    void aReadWhoseCallerGaveUpBeforeTheQueryIsNotSent() throws Exception {
        UUID abandoned = UUID.fromString(newAccount());
        UUID kept = UUID.fromString(newAccount());
        long queries = reads.sendsMade();
        long asked = reads.callsSent();
        Context context = vertx.getOrCreateContext();
        CompletableFuture<Account> keptRead = new CompletableFuture<>();
        context.runOnContext(ignored -> {
            Cancellable call = reads.read(abandoned).subscribe().with(account -> {
            });
            call.cancel();
            reads.read(kept).subscribe().with(keptRead::complete, keptRead::completeExceptionally);
        });

        assertEquals(kept, keptRead.get(WAIT.toSeconds(), TimeUnit.SECONDS).id);
        assertEquals(1, reads.sendsMade() - queries);
        assertEquals(1, reads.callsSent() - asked, "only the kept read was asked of PostgreSQL");
    }
}
