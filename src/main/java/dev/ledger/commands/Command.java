package dev.ledger.commands;

import dev.ledger.idempotency.DurableOperation;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotentRequest;

import java.util.UUID;

/**
 * A command read and checked, whatever broker it came from: what the engine runs ({@code request} and its
 * business {@code step}, exactly what the HTTP door would build for the same request, so that one key is one
 * key across the doors) and what its outcome must name.
 *
 * @param kind          its name ({@link CommandKinds})
 * @param sender        the client the broker vouched for: where its outcome goes
 * @param client        the client the engine runs it for (the sender, or the one client with authentication off)
 * @param key           its idempotency key
 * @param correlationId the sender's correlation, or the key
 * @param partitionKey  the account whose commands it must stay in order with (a Kafka record's key names it), or
 *                      null when its kind names none
 */
public record Command(String kind, String sender, String client, IdempotencyKey key, String correlationId,
                      IdempotentRequest request, DurableOperation step, UUID partitionKey) {
}
