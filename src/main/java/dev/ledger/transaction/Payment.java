package dev.ledger.transaction;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.input.JsonBody;
import dev.ledger.input.Uuids;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A debit or credit as every door receives it, the one description of it: the account it names, its
 * validated fields ({@link PostTransactionRequest}), and what its idempotency key is compared with. A key
 * is one key whichever door its duplicates use: the same client, key, account and fields are the same
 * request, because each door builds that comparison here, as {@code POST /accounts/{id}/transactions}
 * with the fields as the body.
 *
 * @param accountId the account; null when an HTTP path names none (not a UUID), which is a recorded 404
 * @param path      the request's path, as the fingerprint compares it (canonical in {@link IdempotentRequest})
 * @param compared  the body the fingerprint compares: the fields, without {@code accountId}
 */
public record Payment(UUID accountId, PostTransactionRequest fields, String path, JsonNode compared) {
    /** The members of a command's body: the fields and {@code accountId}. */
    public static final List<String> COMMAND_MEMBERS;

    static {
        List<String> members = new ArrayList<>(List.of("accountId"));
        members.addAll(PostTransactionRequest.MEMBERS);
        COMMAND_MEMBERS = List.copyOf(members);
    }

    /** {@code POST /accounts/{id}/transactions}: the account from the path, the fields from the body. */
    public static Payment overHttp(String path, String pathId, JsonBody body) {
        return new Payment(Uuids.parse(pathId).orElse(null), PostTransactionRequest.from(body), path, body.tree());
    }

    /** A command: the account from its body's {@code accountId}, which must be an account's id (a UUID). */
    public static Payment inCommand(JsonBody body) {
        UUID accountId = body.requiredUuid("accountId", "an account's id");
        ObjectNode fields = ((ObjectNode) body.tree()).deepCopy();
        fields.remove("accountId");
        return new Payment(accountId, PostTransactionRequest.from(body), "/accounts/" + accountId + "/transactions", fields);
    }

    /** The request the engine runs for {@code client}'s {@code key}. */
    public IdempotentRequest request(String client, IdempotencyKey key) {
        return IdempotentRequest.of(client, key, "POST", path, compared);
    }
}
