package dev.ledger.outbox;

import java.util.UUID;

/**
 * An event as a broker gets it: its stable id, its type (RabbitMQ's routing key), its account (Kafka's record
 * key), its JSON body, and the W3C {@code traceparent} of the request or command that produced it (null when
 * none was recorded).
 */
public record OutgoingEvent(UUID eventId, String type, UUID accountId, byte[] body, String traceParent) {
}
