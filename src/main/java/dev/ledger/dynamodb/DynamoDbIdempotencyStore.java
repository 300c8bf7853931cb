package dev.ledger.dynamodb;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.IdempotencyStore;
import dev.ledger.idempotency.InFlightKey;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.Reservation;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Typed;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The idempotency store in DynamoDB: one item per key, each operation one conditional write, so the
 * same rules as the Redis scripts hold without a transaction. The item ({@code id} is the key's
 * {@link IdempotentRequest#keyId}, the SHA-256 of client and key):
 * <pre>
 *   id (S, partition key)  state (S) PROCESSING | COMPLETED   fp (S) fingerprint   owner (S) owner token, while PROCESSING
 *   until (N) epoch ms the lease or retention ends            expires_at (N) the same in epoch s: the TTL attribute
 *   path (S)  at (N) epoch ms: the reserving request's path and time, for the key's lookup
 *   status (N)  ctype (S)  location (S, absent when none)  body (B): the recorded answer, byte for byte
 *   kept_until (N) epoch ms: when the key stops being remembered (the durable record's expiry), absent when unknown
 * </pre>
 * DynamoDB deletes an expired item lazily (within days), so every decision reads {@code until}: an item
 * past it is treated as absent, as AWS Powertools does. {@code until} is the writing instance's clock:
 * instances' clocks must agree to well within the lease (NTP does).
 *
 * <ul>
 *   <li>reserve: a {@code PutItem} of a PROCESSING item if the key is absent or past its end; when the
 *       condition fails, the item it found (returned with the failure; a consistent read where the server
 *       does not return it) decides: completed, in progress, key reused, or this owner's own reservation
 *       (a retried put) acquired again;</li>
 *   <li>complete: an {@code UpdateItem} that writes the answer while this owner holds the key, or the key
 *       is free (absent or past its end), never over another owner's state; the completed item has no owner,
 *       so a resent complete does nothing;</li>
 *   <li>release: a {@code DeleteItem} while this owner holds it in flight.</li>
 * </ul>
 * Keys that settle are announced to this instance's waiters ({@link DynamoDbSettledKeys}).
 */
@ApplicationScoped
@Typed(DynamoDbIdempotencyStore.class)
public class DynamoDbIdempotencyStore implements IdempotencyStore {
    static final String ID = "id";
    static final String TTL = "expires_at";
    private static final String PROCESSING = "PROCESSING";
    private static final String COMPLETED = "COMPLETED";
    private static final Map<String, String> NAMES = Map.of("#id", ID, "#state", "state", "#owner", "owner",
            "#until", "until", "#status", "status", "#location", "location", "#ttl", TTL);

    private final DynamoDbCalls dynamo;
    private final DynamoDbSettledKeys settled;
    private final String table;
    private final long leaseMillis;
    private final long retentionMillis;

    public DynamoDbIdempotencyStore(DynamoDbCalls dynamo, DynamoDbSettledKeys settled, LedgerConfig config) {
        this.dynamo = dynamo;
        this.settled = settled;
        this.table = config.idempotency().dynamodb().table();
        this.leaseMillis = config.idempotency().lease().toMillis();
        this.retentionMillis = config.idempotency().retention().toMillis();
    }

    @Override
    public String name() {
        return "DynamoDB";
    }

    @Override
    public Uni<Reservation> reserve(IdempotentRequest request, String owner) {
        // an item that refused the put and was gone when read: the key is free now, so try once more
        return put(request, owner).chain(found -> found != null ? Uni.createFrom().item(found)
                : put(request, owner).map(again -> again != null ? again : new Reservation.InProgress(0)));
    }

    /** One conditional put; null when the item that refused it was gone by the time it was read. */
    private Uni<Reservation> put(IdempotentRequest request, String owner) {
        return dynamo.run("reserve", "PutItem", client -> {
            long now = System.currentTimeMillis();
            Map<String, AttributeValue> item = new HashMap<>();
            item.put(ID, s(request.keyId()));
            item.put("state", s(PROCESSING));
            item.put("fp", s(request.fingerprint().hex()));
            item.put("owner", s(owner));
            item.put("path", s(request.path()));
            item.put("at", n(now));
            ends(item, now + leaseMillis);
            return client.putItem(put -> put.tableName(table).item(item)
                            .conditionExpression("attribute_not_exists(#id) OR #until < :now")
                            .expressionAttributeNames(Map.of("#id", ID, "#until", "until"))
                            .expressionAttributeValues(Map.of(":now", n(now)))
                            .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD))
                    .<Reservation>thenApply(ignored -> new Reservation.Acquired(owner))
                    .exceptionallyCompose(failure -> {
                        if (!(unwrap(failure) instanceof ConditionalCheckFailedException refused)) {
                            return CompletableFuture.failedFuture(unwrap(failure));
                        }
                        if (refused.hasItem() && !refused.item().isEmpty()) {
                            return CompletableFuture.completedFuture(decide(refused.item(), request, owner, now));
                        }
                        // a server that does not return the item with the failure (dynalite): read it
                        return client.getItem(get -> get.tableName(table).key(Map.of(ID, s(request.keyId()))).consistentRead(true))
                                .thenApply(GetItemResponse::item)
                                .thenApply(found -> decide(found, request, owner, System.currentTimeMillis()));
                    });
        });
    }

    /** What the item that refused a reservation holds; null when it is gone (deleted, or past its end). */
    static Reservation decide(Map<String, AttributeValue> item, IdempotentRequest request, String owner, long now) {
        if (item == null || item.isEmpty() || until(item) < now) {
            return null;
        }
        if (!request.fingerprint().hex().equals(text(item, "fp"))) {
            return new Reservation.Mismatch();
        }
        if (COMPLETED.equals(text(item, "state"))) {
            AttributeValue location = item.get("location");
            return new Reservation.Completed(new RecordedResponse(Integer.parseInt(item.get("status").n()),
                    text(item, "ctype"), location == null ? null : location.s(), item.get("body").b().asByteArray(),
                    instant(item, "kept_until")));
        }
        if (owner.equals(text(item, "owner"))) {
            return new Reservation.Acquired(owner); // this owner's own put, sent again
        }
        return new Reservation.InProgress(until(item) - now);
    }

    @Override
    public Uni<Boolean> complete(IdempotentRequest request, String owner, RecordedResponse response) {
        return dynamo.settle("complete", "UpdateItem", client -> {
            long now = System.currentTimeMillis();
            long until = now + retentionMillis;
            Map<String, AttributeValue> values = new HashMap<>();
            values.put(":owner", s(owner));
            values.put(":now", n(now));
            values.put(":completed", s(COMPLETED));
            values.put(":fp", s(request.fingerprint().hex()));
            values.put(":status", n(response.status()));
            values.put(":ctype", s(response.contentType()));
            values.put(":body", AttributeValue.fromB(SdkBytes.fromByteArray(response.body())));
            values.put(":until", n(until));
            values.put(":ttl", n(seconds(until)));
            List<String> set = new ArrayList<>(List.of("#state = :completed", "fp = :fp", "#status = :status",
                    "ctype = :ctype", "body = :body", "#until = :until", "#ttl = :ttl"));
            // the owner goes: a completed key is nobody's, so a resent complete or a release finds nothing to change
            List<String> remove = new ArrayList<>(List.of("#owner"));
            optional(response.location() == null ? null : s(response.location()), "#location", set, remove, values);
            optional(response.expiresAt() == null ? null : n(response.expiresAt().toEpochMilli()), "kept_until", set, remove, values);
            String update = "SET " + String.join(", ", set) + " REMOVE " + String.join(", ", remove);
            return client.updateItem(u -> u.tableName(table).key(Map.of(ID, s(request.keyId())))
                            .updateExpression(update)
                            .conditionExpression("attribute_not_exists(#id) OR #owner = :owner OR #until < :now")
                            // (no PROCESSING check needed: only a PROCESSING item has an owner)
                            .expressionAttributeNames(NAMES)
                            .expressionAttributeValues(values))
                    .thenApply(ignored -> true)
                    .exceptionallyCompose(DynamoDbIdempotencyStore::falseWhenRefused);
        }).invoke(written -> announce(written, request));
    }

    @Override
    public Uni<Boolean> release(IdempotentRequest request, String owner) {
        return dynamo.settle("release", "DeleteItem", client -> client.deleteItem(delete -> delete.tableName(table)
                                .key(Map.of(ID, s(request.keyId())))
                                .conditionExpression("#owner = :owner AND #state = :processing")
                                .expressionAttributeNames(Map.of("#owner", "owner", "#state", "state"))
                                .expressionAttributeValues(Map.of(":owner", s(owner), ":processing", s(PROCESSING))))
                        .thenApply(ignored -> true)
                        .exceptionallyCompose(DynamoDbIdempotencyStore::falseWhenRefused))
                .invoke(released -> announce(released, request));
    }

    @Override
    public Uni<InFlightKey> inFlight(String keyId) {
        return dynamo.run("state", "GetItem", client -> client.getItem(get -> get.tableName(table).key(Map.of(ID, s(keyId)))
                        .consistentRead(true).projectionExpression("#state, #until, #path, #at")
                        .expressionAttributeNames(Map.of("#state", "state", "#until", "until", "#path", "path", "#at", "at")))
                .thenApply(found -> found.hasItem() && PROCESSING.equals(text(found.item(), "state"))
                        && until(found.item()) >= System.currentTimeMillis()
                        ? new InFlightKey(text(found.item(), "path"), instant(found.item(), "at"), instant(found.item(), "until"))
                        : null));
    }

    /**
     * An attribute of the completed item that an answer may lack: {@code name = value} when there is one, else
     * removed (an item completed again over a free key keeps nothing of an earlier answer).
     */
    private static void optional(AttributeValue value, String name, List<String> set, List<String> remove,
                                 Map<String, AttributeValue> values) {
        String placeholder = ":" + name.replace("#", "");
        if (value != null) {
            set.add(name + " = " + placeholder);
            values.put(placeholder, value);
        } else {
            remove.add(name);
        }
    }

    private void announce(boolean settledHere, IdempotentRequest request) {
        if (settledHere) {
            settled.announce(request.keyId());
        }
    }

    private static CompletableFuture<Boolean> falseWhenRefused(Throwable failure) {
        return unwrap(failure) instanceof ConditionalCheckFailedException
                ? CompletableFuture.completedFuture(false) : CompletableFuture.failedFuture(unwrap(failure));
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** The item's end: {@code until} in ms, and the TTL attribute DynamoDB deletes it by, in whole seconds after it. */
    private static void ends(Map<String, AttributeValue> item, long until) {
        item.put("until", n(until));
        item.put(TTL, n(seconds(until)));
    }

    private static long seconds(long millis) {
        return (millis + 999) / 1000;
    }

    private static long until(Map<String, AttributeValue> item) {
        AttributeValue until = item.get("until");
        return until == null ? Long.MAX_VALUE : Long.parseLong(until.n());
    }

    private static Instant instant(Map<String, AttributeValue> item, String name) {
        AttributeValue millis = item.get(name);
        return millis == null ? null : Instant.ofEpochMilli(Long.parseLong(millis.n()));
    }

    private static String text(Map<String, AttributeValue> item, String name) {
        AttributeValue value = item.get(name);
        return value == null ? null : value.s();
    }

    private static AttributeValue s(String value) {
        return AttributeValue.fromS(value);
    }

    private static AttributeValue n(long value) {
        return AttributeValue.fromN(Long.toString(value));
    }
}
