package dev.ledger.transaction;

import dev.ledger.outbox.EventData;
import dev.ledger.outbox.EventEnvelope;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;

/** The data of a {@code transaction.applied} event: the transaction, as the 201 that applied it showed it. */
@ApplicationScoped
public class TransactionAppliedEvent implements EventData {
    @Override
    public String type() {
        return EventEnvelope.TRANSACTION_APPLIED;
    }

    @Override
    public Object render(Row row) {
        return TransactionView.of(row);
    }
}
