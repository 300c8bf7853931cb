package dev.ledger.commands;

import dev.ledger.idempotency.DurableOperation;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.input.JsonBody;
import dev.ledger.transaction.Payment;
import dev.ledger.transaction.TransactionService;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The commands the brokers carry, by name (RabbitMQ's routing key, Kafka's {@code ledger-command} header):
 * for each, the members its body may have and how the body becomes the engine's request and business step,
 * built by the feature's own description of it (a {@link Payment} for {@code transactions.post}) so that the
 * command is the request its HTTP POST would be.
 */
@ApplicationScoped
public class CommandKinds {
    /** A command that names no kind is a payment. */
    public static final String DEFAULT = "transactions.post";

    /** How one kind's body is read: its request, its business step, and the account it stays in order with. */
    @FunctionalInterface
    interface Reader {
        Body read(JsonBody body, String client, IdempotencyKey key);
    }

    record Kind(List<String> members, Reader reader) {
    }

    record Body(IdempotentRequest request, DurableOperation step, UUID partitionKey) {
    }

    private final Map<String, Kind> kinds;

    public CommandKinds(TransactionService transactions) {
        this.kinds = Map.of(DEFAULT, new Kind(Payment.COMMAND_MEMBERS, (body, client, key) -> {
            Payment payment = Payment.inCommand(body);
            return new Body(payment.request(client, key), record -> transactions.post(record, payment), payment.accountId());
        }));
    }

    Optional<Kind> named(String name) {
        return Optional.ofNullable(kinds.get(name == null ? DEFAULT : name));
    }
}
