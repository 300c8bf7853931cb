package dev.ledger.shard;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;

/** The application with a second shard, {@code two} ({@link ShardTwo}), for the client {@code other}. */
public class ShardsProfile implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(ShardTwo.class));
    }
}
