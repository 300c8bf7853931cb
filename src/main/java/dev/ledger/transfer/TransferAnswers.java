package dev.ledger.transfer;

import dev.ledger.idempotency.RecordedSuccess;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.UUID;

/** What a transfer's successful request answered, as the key's lookup shows it ({@link RecordedSuccess}). */
final class TransferAnswers {
    private TransferAnswers() {
    }

    /** A transfer made, a hold, or a reversal (a new transfer): 201 with its {@code Location}. */
    @ApplicationScoped
    static class Created implements RecordedSuccess {
        @Override
        public String outcome() {
            return "TRANSFER_CREATED";
        }

        @Override
        public int status() {
            return 201;
        }

        @Override
        public Uni<String> location(String client, UUID resourceId) {
            return Uni.createFrom().item(NewTransfer.PATH + "/" + resourceId);
        }
    }

    /** A hold settled, posted or voided: 200, no {@code Location}. */
    abstract static class Settled implements RecordedSuccess {
        private final String outcome;

        Settled(String outcome) {
            this.outcome = outcome;
        }

        @Override
        public String outcome() {
            return outcome;
        }

        @Override
        public int status() {
            return 200;
        }
    }

    @ApplicationScoped
    static class Posted extends Settled {
        Posted() {
            super("TRANSFER_POSTED");
        }
    }

    @ApplicationScoped
    static class Voided extends Settled {
        Voided() {
            super("TRANSFER_VOIDED");
        }
    }
}
