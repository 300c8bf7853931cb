package dev.ledger.commands;

import dev.ledger.problem.ProblemException;

/**
 * What a broker's message carries, as its adapter read it, before anything is checked: who sent it (as the
 * broker authenticated them: RabbitMQ's {@code user_id}, the client a Kafka topic names; null when nobody
 * the broker vouches for), which command it is, its idempotency key, correlation, content type and body.
 *
 * @param sender        the client the broker vouches for, or null
 * @param kind          the command's name ({@link CommandKinds}: {@code transactions.post}, ...); null: the default
 * @param keyName       where the broker carries the key ({@code message_id}, {@code idempotency-key}), as refusals name it
 * @param key           the idempotency key as sent (the header's bare form), or null when missing
 * @param correlationId the correlation the sender gave, or null (the key is the default)
 * @param contentType   the content type as sent, or null when none
 * @param body          the body as sent
 * @param unreadable    what the broker's own rules refuse in the message (a header given twice, one that is not
 *                      UTF-8), or null; refused once the sender is known, as any other unreadable command
 */
public record CommandEnvelope(String sender, String kind, String keyName, String key, String correlationId,
                              String contentType, byte[] body, ProblemException unreadable) {
}
