package dev.ledger.account;

import dev.ledger.dependency.TurnBatcher;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.hibernate.reactive.mutiny.Mutiny;

import java.util.List;
import java.util.UUID;

/**
 * Reads accounts by id, the reads one event loop asks for during one turn in one query
 * ({@link TurnBatcher}): a Hibernate Reactive stateless session's multi-get, one
 * {@code where id = any(?)} on one pooled connection. A read alone is the session's plain get. A
 * stateless session keeps no persistence context (no snapshot, no flush, no events) for rows
 * that are only read.
 *
 * <p>Every read of a batch sees the committed state at the time of the query, which runs after
 * every request of the batch arrived: as fresh as a query of its own. Under load a query answers
 * several reads, so the service and PostgreSQL handle one statement, one write and one read of
 * the socket for them where they handled one each (docs/performance.md).
 */
@ApplicationScoped
public class AccountReads extends TurnBatcher<UUID, Account> {
    private final Mutiny.SessionFactory sessions;

    public AccountReads(Mutiny.SessionFactory sessions) {
        this.sessions = sessions;
    }

    /** In /q/metrics: {@code ledger_account_reads_total} over {@code ledger_account_read_queries_total} is the mean batch. */
    @Produces
    @Singleton
    MeterBinder readMetrics() {
        return counters("ledger.account.reads", "Accounts read by id (GET /accounts/{id})",
                "ledger.account.read.queries", "PostgreSQL queries that read them (a batch is one)");
    }

    /** The account with this id, or null. */
    public Uni<Account> read(UUID id) {
        return submit(id);
    }

    @Override
    protected Uni<List<Account>> batch(List<UUID> ids) {
        return sessions.withStatelessSession(session -> session.get(Account.class, ids.toArray()));
    }

    @Override
    protected Uni<Account> alone(UUID id) {
        return sessions.withStatelessSession(session -> session.get(Account.class, id));
    }
}
