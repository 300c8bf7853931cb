package dev.ledger.commands.kafka;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.smallrye.common.annotation.Identifier;
import jakarta.enterprise.inject.spi.CDI;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import java.util.Map;

/**
 * Tells {@link KafkaLanes} what each poll of the commands' consumer returns, on the polling thread just before the
 * poll returns, so that a shard's budget counts its records from the moment they are fetched and its partitions are
 * paused before the next poll. A Kafka consumer interceptor (the channel's {@code interceptor.classes}): Kafka makes
 * it by reflection, and it finds the lanes in the application.
 */
@RegisterForReflection
public class KafkaFetches implements ConsumerInterceptor<Object, Object> {
    private KafkaLanes lanes;

    @Override
    public void configure(Map<String, ?> configs) {
        lanes = CDI.current().select(KafkaLanes.class, Identifier.Literal.of(KafkaLanes.NAME)).get();
    }

    @Override
    public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
        lanes.fetched(records);
        return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
    }

    @Override
    public void close() {
    }
}
