package dev.ledger.outbox;

import java.util.UUID;

/** An event as a broker gets it: its stable id, its type (the routing key) and its JSON body. */
public record OutgoingEvent(UUID eventId, String type, byte[] body) {
}
