package dev.ledger.shard;

import dev.ledger.outbox.EventsSettings;
import dev.ledger.testing.KafkaBroker;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The application with a second shard, {@code two} ({@link ShardTwo}), for the client {@code dev}: {@link ShardsTest},
 * and the suite's most important black-box classes run again there (the {@code Sharded…Test} subclasses: replays byte
 * for byte and every refusal, storms of one key and one account, transfers and holds and their replays);
 * events on, to the shared RabbitMQ as {@link EventsSettings} sends them (the relays woken by the request path and the
 * expiry job alone), without its traces; both command doors open, Kafka's on the tests' broker ({@link KafkaBroker}).
 */
public class ShardsProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> overrides = new HashMap<>(EventsSettings.overrides());
        overrides.keySet().removeIf(setting -> setting.startsWith("quarkus.otel."));
        overrides.put("ledger.messaging.kafka.enabled", "true");
        overrides.put("kafka.bootstrap.servers", KafkaBroker.bootstrap());
        // a Kafka command retried in place while its shard is down tries again within 2 s of the shard's return
        overrides.put("ledger.messaging.kafka.max-retry-delay", "2s");
        return overrides;
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(ShardTwo.class));
    }
}
