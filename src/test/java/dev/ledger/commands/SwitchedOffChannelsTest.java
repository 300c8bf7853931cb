package dev.ledger.commands;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SmallRye's SRMSG00207 is dropped only when every component it names is on a channel switched off. */
class SwitchedOffChannelsTest {
    private static final String KAFKA_OFF = """
            SRMSG00207: Some components are not connected to either downstream consumers or upstream producers:
            \t- Emitter{channel:'kafka-outcomes'} has no downstream
            \t- SubscriberMethod{method:'dev.ledger.commands.kafka.KafkaCommands#consume', incoming:'kafka-commands'} has no upstream
            """;

    @Test
    void aWarningAboutTheChannelsOfADoorSwitchedOffIsDropped() {
        assertTrue(SwitchedOffChannels.onlySwitchedOff(KAFKA_OFF, Set.of("kafka-outcomes", "kafka-commands")::contains));
    }

    @Test
    void aWarningThatNamesAnyOtherChannelIsKept() {
        assertFalse(SwitchedOffChannels.onlySwitchedOff(KAFKA_OFF, Set.of("kafka-outcomes")::contains));
        assertFalse(SwitchedOffChannels.onlySwitchedOff(KAFKA_OFF
                + "\t- OutgoingConnector{channel:'typo', attribute:'mp.messaging.outgoing.typo'} has no upstream\n",
                Set.of("kafka-outcomes", "kafka-commands")::contains));
        assertFalse(SwitchedOffChannels.onlySwitchedOff("SRMSG00207: Some components are not connected", channel -> true));
    }
}
