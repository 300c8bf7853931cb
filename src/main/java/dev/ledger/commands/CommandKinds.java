package dev.ledger.commands;

import dev.ledger.idempotency.DurableOperation;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.input.JsonBody;
import dev.ledger.transaction.Payment;
import dev.ledger.transaction.TransactionService;
import dev.ledger.transfer.CreateTransferRequest;
import dev.ledger.transfer.NewTransfer;
import dev.ledger.transfer.TransferChange;
import dev.ledger.transfer.TransferService;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The commands the brokers carry, by name (RabbitMQ's routing key, Kafka's {@code ledger-command} header):
 * for each, the members its body may have and how the body becomes the engine's request and business step,
 * built by the feature's own description of it (a {@link Payment} for {@code transactions.post}, a
 * {@link NewTransfer} for {@code transfers.create}, a {@link TransferChange} for {@code transfers.post},
 * {@code .void} and {@code .reverse}) so that the command is the request its HTTP POST would be, and one key is
 * one key whichever door it took. A payment stays in order with its account, a new transfer with its debit
 * account (a Kafka record's key names it); a change of a transfer names no account.
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

    public CommandKinds(TransactionService transactions, TransferService transfers) {
        this.kinds = Map.of(
                DEFAULT, new Kind(Payment.COMMAND_MEMBERS, (body, client, key) -> {
                    Payment payment = Payment.inCommand(body);
                    return new Body(payment.request(client, key), record -> transactions.post(record, payment), payment.accountId());
                }),
                "transfers.create", new Kind(CreateTransferRequest.MEMBERS, (body, client, key) -> {
                    NewTransfer transfer = NewTransfer.inCommand(body);
                    return new Body(transfer.request(client, key), record -> transfers.create(record, transfer),
                            transfer.fields().debitAccountId());
                }),
                "transfers.post", change(TransferChange.Kind.POST, transfers),
                "transfers.void", change(TransferChange.Kind.VOID, transfers),
                "transfers.reverse", change(TransferChange.Kind.REVERSE, transfers));
    }

    /** A post, void or reversal: its body is the HTTP body and {@code transferId}; it names no account to keep order with. */
    private static Kind change(TransferChange.Kind kind, TransferService transfers) {
        return new Kind(kind.commandMembers(), (body, client, key) -> {
            TransferChange change = TransferChange.inCommand(kind, body);
            return new Body(change.request(client, key), record -> transfers.change(record, change), null);
        });
    }

    /** Every command's name ({@code transactions.post}, {@code transfers.create}, ...): the brokers' routing keys. */
    public Set<String> names() {
        return kinds.keySet();
    }

    Optional<Kind> named(String name) {
        return Optional.ofNullable(kinds.get(name == null ? DEFAULT : name));
    }
}
