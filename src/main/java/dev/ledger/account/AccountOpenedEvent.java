package dev.ledger.account;

import dev.ledger.outbox.EventData;
import dev.ledger.outbox.EventEnvelope;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;

/** The data of an {@code account.opened} event: the account as opened, as the 201 that opened it showed it. */
@ApplicationScoped
public class AccountOpenedEvent implements EventData {
    @Override
    public String type() {
        return EventEnvelope.ACCOUNT_OPENED;
    }

    @Override
    public Object render(Row row) {
        return AccountView.opened(row.getUUID("account_id"), row.getString("currency"),
                row.getOffsetDateTime("account_created_at").toInstant());
    }
}
