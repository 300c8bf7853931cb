package dev.ledger.dependency;

import dev.ledger.config.LedgerConfig;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * With shards ({@code ledger.shards.*}) PostgreSQL's statements are timed per shard ({@link Postgres}: {@code shard} in
 * {@code ledger_dependency_calls_seconds}), and Prometheus wants every series of one name to have the same labels: so
 * the calls that belong to no shard (Redis', DynamoDB's, a broker's publishes) get an empty {@code shard}, which
 * Prometheus reads as no label at all. Without shards no series of the name has one. Quarkus applies every
 * {@link MeterFilter} bean to the registry.
 */
public class DependencyShardTag {
    static final String SHARD = "shard";

    @Produces
    @Singleton
    MeterFilter emptyShardForCallsOfNoShard(LedgerConfig config) {
        if (config.shards().isEmpty()) {
            return new MeterFilter() {
            };
        }
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                return DependencyTimer.NAME.equals(id.getName()) && id.getTag(SHARD) == null ? id.withTag(Tag.of(SHARD, "")) : id;
            }
        };
    }
}
