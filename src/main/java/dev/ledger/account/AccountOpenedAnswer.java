package dev.ledger.account;

import dev.ledger.idempotency.RecordedSuccess;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.UUID;

/** The answer an {@code OPENED} record stands for, as the key's lookup shows it: 201, {@code Location: /accounts/{id}}. */
@ApplicationScoped
public class AccountOpenedAnswer implements RecordedSuccess {
    @Override
    public String outcome() {
        return "OPENED";
    }

    @Override
    public int status() {
        return 201;
    }

    @Override
    public Uni<String> location(String client, UUID resourceId) {
        return Uni.createFrom().item(AccountService.location(resourceId));
    }
}
