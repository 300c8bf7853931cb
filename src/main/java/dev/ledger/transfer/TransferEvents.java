package dev.ledger.transfer;

import dev.ledger.outbox.EventData;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.function.Function;

/**
 * The data of the transfer events, one per account a change concerns: the transfer as
 * {@code GET /transfers/{id}} showed it right after the change, rendered from its immutable columns at the
 * moment its type names ({@link TransferView.Moment}), so an event published later, or again, carries the
 * same data. A reversal is a {@code transfer.posted} of the new transfer.
 */
public abstract class TransferEvents implements EventData {
    public static final String PENDING = "transfer.pending";
    public static final String POSTED = "transfer.posted";
    public static final String VOIDED = "transfer.voided";
    public static final String EXPIRED = "transfer.expired";

    private final String type;
    private final Function<Row, TransferView.Moment> moment;

    TransferEvents(String type, Function<Row, TransferView.Moment> moment) {
        this.type = type;
        this.moment = moment;
    }

    @Override
    public String type() {
        return type;
    }

    @Override
    public Object render(Row row) {
        return TransferView.of(row, moment.apply(row));
    }

    /** {@code transfer.pending}: a hold made. */
    @ApplicationScoped
    public static class Pending extends TransferEvents {
        public Pending() {
            super(PENDING, row -> TransferView.Moment.CREATED);
        }
    }

    /**
     * {@code transfer.posted}: money moved, by a transfer made posted (a reversal included: as made) or by a
     * hold's post (as posted: {@code postedAmount} what moved). A hold's post is told apart by its expiry,
     * which no transfer made posted has.
     */
    @ApplicationScoped
    public static class Posted extends TransferEvents {
        public Posted() {
            super(POSTED, row -> row.getOffsetDateTime("transfer_expires_at") == null
                    ? TransferView.Moment.CREATED : TransferView.Moment.POSTED);
        }
    }

    /** {@code transfer.voided}: a hold released by its void. */
    @ApplicationScoped
    public static class Voided extends TransferEvents {
        public Voided() {
            super(VOIDED, row -> TransferView.Moment.VOIDED);
        }
    }

    /** {@code transfer.expired}: a hold released at its expiry, by the expiry job or by a settlement that found it expired. */
    @ApplicationScoped
    public static class Expired extends TransferEvents {
        public Expired() {
            super(EXPIRED, row -> TransferView.Moment.EXPIRED);
        }
    }
}
