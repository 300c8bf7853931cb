package dev.ledger.transfer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.input.JsonBody;

/**
 * A transfer to create as every door receives it, the one description of it: its validated fields and
 * what its idempotency key is compared with, {@code POST /transfers} with the body, whichever door it came
 * through. The account ids are compared as the accounts they name (a UUID in either case is one account),
 * as a path's are.
 *
 * @param compared the body the fingerprint compares: the one received, its account ids in canonical form
 */
public record NewTransfer(CreateTransferRequest fields, JsonNode compared) {
    public static final String PATH = "/transfers";

    /** {@code POST /transfers}. */
    public static NewTransfer overHttp(JsonBody body) {
        return of(body);
    }

    /** A command: its body is the HTTP body. */
    public static NewTransfer inCommand(JsonBody body) {
        return of(body);
    }

    private static NewTransfer of(JsonBody body) {
        CreateTransferRequest fields = CreateTransferRequest.from(body);
        ObjectNode compared = ((ObjectNode) body.tree()).deepCopy();
        compared.put("debitAccountId", fields.debitAccountId().toString());
        compared.put("creditAccountId", fields.creditAccountId().toString());
        return new NewTransfer(fields, compared);
    }

    /** The request the engine runs for {@code client}'s {@code key}. */
    public IdempotentRequest request(String client, IdempotencyKey key) {
        return IdempotentRequest.of(client, key, "POST", PATH, compared);
    }
}
