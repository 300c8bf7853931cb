package dev.ledger.transaction;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;

@RegisterForReflection
@Schema(name = "TransactionPage", additionalProperties = Schema.False.class)
public record TransactionPage(
        List<TransactionView> items,
        @Schema(nullable = true, description = "The 'after' of the next page (the sequence of the last item), "
                + "or null when no items follow") Long next) {
}
