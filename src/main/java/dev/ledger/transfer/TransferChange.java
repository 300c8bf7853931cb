package dev.ledger.transfer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.input.JsonBody;
import dev.ledger.input.Uuids;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

/**
 * A post, void or reversal of an existing transfer as every door receives it, the one description of it:
 * the transfer it names, its validated fields, and what its idempotency key is compared with:
 * {@code POST /transfers/{id}/post} (or {@code void}, {@code reversals}) with the fields as the body,
 * whichever door it came through. A command's body is the HTTP body plus {@code transferId}.
 *
 * @param transferId the transfer; null when an HTTP path names none (not a UUID), which is a recorded 404
 * @param path       the request's path, as the fingerprint compares it (canonical in {@link IdempotentRequest})
 * @param compared   the body the fingerprint compares: the fields, without {@code transferId}
 */
public record TransferChange(Kind kind, UUID transferId, Fields fields, String path, JsonNode compared) {

    /** The fields of one kind of change: {@link PostTransferRequest}, {@link VoidTransferRequest}, {@link ReverseTransferRequest}. */
    public sealed interface Fields permits PostTransferRequest, VoidTransferRequest, ReverseTransferRequest {
    }

    /** What the change does, the last segment of its path, and the members its body may have. */
    public enum Kind {
        POST("post", PostTransferRequest.MEMBERS, PostTransferRequest::from),
        VOID("void", VoidTransferRequest.MEMBERS, VoidTransferRequest::from),
        REVERSE("reversals", ReverseTransferRequest.MEMBERS, ReverseTransferRequest::from);

        private final String segment;
        private final List<String> members;
        private final List<String> commandMembers;
        private final Function<JsonBody, Fields> reader;

        Kind(String segment, List<String> members, Function<JsonBody, Fields> reader) {
            this.segment = segment;
            this.members = members;
            List<String> command = new ArrayList<>(List.of("transferId"));
            command.addAll(members);
            this.commandMembers = List.copyOf(command);
            this.reader = reader;
        }

        /** The members of its HTTP body. */
        public List<String> members() {
            return members;
        }

        /** The members of its command's body: {@code transferId} and the HTTP body's. */
        public List<String> commandMembers() {
            return commandMembers;
        }

        /** Its path for the transfer {@code id}. */
        public String path(UUID id) {
            return NewTransfer.PATH + "/" + id + "/" + segment;
        }
    }

    /** {@code POST /transfers/{id}/<kind>}: the transfer from the path, the fields from the body. */
    public static TransferChange overHttp(Kind kind, String path, String pathId, JsonBody body) {
        return new TransferChange(kind, Uuids.parse(pathId).orElse(null), kind.reader.apply(body), path, body.tree());
    }

    /** A command: the transfer from its body's {@code transferId}, which must be a transfer's id (a UUID). */
    public static TransferChange inCommand(Kind kind, JsonBody body) {
        UUID transferId = body.requiredUuid("transferId", "a transfer's id");
        ObjectNode fields = ((ObjectNode) body.tree()).deepCopy();
        fields.remove("transferId");
        return new TransferChange(kind, transferId, kind.reader.apply(body), kind.path(transferId), fields);
    }

    /** The request the engine runs for {@code client}'s {@code key}. */
    public IdempotentRequest request(String client, IdempotencyKey key) {
        return IdempotentRequest.of(client, key, "POST", path, compared);
    }
}
