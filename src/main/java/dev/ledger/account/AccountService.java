package dev.ledger.account;

import dev.ledger.outbox.Outbox;
import dev.ledger.idempotency.DurableOutcome;
import dev.ledger.idempotency.DurableRecord;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.ResponseRecorder;
import dev.ledger.problem.ProblemException;
import dev.ledger.problem.ProblemType;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.UUID;

@ApplicationScoped
public class AccountService {
    private final AccountRepository accounts;
    private final ResponseRecorder recorder;
    private final Outbox outbox;

    public AccountService(AccountRepository accounts, ResponseRecorder recorder, Outbox outbox) {
        this.accounts = accounts;
        this.recorder = recorder;
        this.outbox = outbox;
    }

    /** Opens an account in one transaction with its idempotency record and, while events are on, its event. */
    public Uni<DurableOutcome> open(DurableRecord record, OpenAccountRequest request) {
        return accounts.open(record, UUID.randomUUID(), request.currency(), outbox.destinations())
                .invoke(row -> {
                    if (!row.getBoolean("replayed")) {
                        outbox.written(record.client());
                    }
                })
                .map(row -> DurableOutcome.of(row, this::render));
    }

    private RecordedResponse render(Row row) {
        UUID id = row.getUUID("account_id");
        String currency = row.getString("currency");
        java.time.Instant createdAt = row.getOffsetDateTime("created_at").toInstant();
        // an open recorded before there were holds replays as it was answered, without their members
        AccountView view = row.getBoolean("with_holds") ? AccountView.opened(id, currency, createdAt)
                : AccountView.openedBeforeHolds(id, currency, createdAt);
        return recorder.created(view, location(id));
    }

    /** An opened account's {@code Location}. */
    static String location(UUID id) {
        return "/accounts/" + id;
    }

    public Uni<AccountView> find(UUID id, String owner) {
        return accounts.readOwned(id, owner)
                .onItem().ifNull().failWith(AccountService::notFound)
                .map(AccountView::of);
    }

    public static ProblemException notFound() {
        return new ProblemException(ProblemType.ACCOUNT_NOT_FOUND, "No such account");
    }
}
