package dev.ledger.outbox;

import java.util.UUID;

/** An event as a broker gets it: its stable id, its type (RabbitMQ's routing key), its account (Kafka's record key) and its JSON body. */
public record OutgoingEvent(UUID eventId, String type, UUID accountId, byte[] body) {
}
