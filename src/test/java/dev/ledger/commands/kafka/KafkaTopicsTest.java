package dev.ledger.commands.kafka;

import io.quarkus.runtime.configuration.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KafkaTopicsTest {

    @Test
    void clientsWhoseTopicsKafkaWouldConfuseAreRefusedAtStart() {
        ConfigurationException refused = assertThrows(ConfigurationException.class,
                () -> KafkaTopics.check(List.of("acme.eu", "globex", "acme_eu")));
        assertTrue(refused.getMessage().contains("'acme.eu' and 'acme_eu'"), refused.getMessage());
        assertDoesNotThrow(() -> KafkaTopics.check(List.of("acme.eu", "acme-eu", "Acme.eu", "globex")));
    }

    @Test
    void aClientIdTooLongForATopicNameIsRefused() {
        ConfigurationException refused = assertThrows(ConfigurationException.class,
                () -> KafkaTopics.check(List.of("x".repeat(240))));
        assertTrue(refused.getMessage().contains("cannot name a Kafka topic"), refused.getMessage());
    }

    @Test
    void theClientIsTheCommandsTopicsSuffix() {
        assertEquals(Optional.of("acme"), KafkaTopics.clientOf("ledger.commands.acme"));
        assertEquals(Optional.empty(), KafkaTopics.clientOf("ledger.commands."));
        assertEquals(Optional.empty(), KafkaTopics.clientOf("ledger.dead.commands"));
        assertEquals("ledger.outcomes.acme", KafkaTopics.outcomesOf("acme"));
    }
}
