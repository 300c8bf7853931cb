package dev.ledger.shard;

import dev.ledger.outbox.EventsSettings;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The application with a second shard, {@code two} ({@link ShardTwo}), for the client {@code dev}: {@link ShardsTest},
 * and the suite's most important black-box classes run again there (the {@code Sharded…Test} subclasses: replays byte
 * for byte and every refusal, storms of one key and one account, transfers and holds, each client's data its own);
 * events on, to the shared RabbitMQ as {@link EventsSettings} sends them (the relays woken by the request path and the
 * expiry job alone), without its traces.
 */
public class ShardsProfile implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
        return EventsSettings.overrides().entrySet().stream().filter(setting -> !setting.getKey().startsWith("quarkus.otel."))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(ShardTwo.class));
    }
}
