package dev.ledger.outbox;

import io.vertx.mutiny.sqlclient.Row;

/**
 * The data of one type of event, rendered from its claimed row ({@code ledger_claim_events}) exactly as
 * the API shows it. Provided by the feature the data belongs to (an account, a transaction), so that
 * the outbox knows no feature.
 */
public interface EventData {
    /** The event type it renders, e.g. {@link EventEnvelope#TRANSACTION_APPLIED}. */
    String type();

    Object render(Row row);
}
