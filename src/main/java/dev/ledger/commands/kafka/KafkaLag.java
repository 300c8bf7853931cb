package dev.ledger.commands.kafka;

import dev.ledger.config.LedgerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Kafka consumer's lag per partition of this instance, in /q/metrics as
 * {@code ledger_commands_lag{topic, partition}}: the records past the committed offset, which are the
 * records not settled yet (the ones a crash would deliver again). Read every few seconds on the consumer's
 * own polling thread, for the partitions assigned to this instance. Kafka's own
 * {@code kafka_consumer_fetch_manager_records_lag} counts from the fetch position and appears only after
 * Micrometer's next look at the client's metrics (every minute).
 */
@ApplicationScoped
public class KafkaLag {
    private static final Logger LOG = Logger.getLogger(KafkaLag.class);
    private static final Duration EVERY = Duration.ofSeconds(2);

    private final boolean enabled;
    private final KafkaClientService clients;
    private final MultiGauge lag;
    private long timer = -1;

    public KafkaLag(LedgerConfig config, KafkaClientService clients, MeterRegistry metrics) {
        this.enabled = config.messaging().kafka().enabled();
        this.clients = clients;
        this.lag = MultiGauge.builder("ledger.commands.lag")
                .description("Kafka commands past the committed offset, per partition of this instance: not yet settled")
                .register(metrics);
    }

    void start(@Observes StartupEvent started, Vertx vertx) {
        if (enabled) {
            timer = vertx.setPeriodic(EVERY.toMillis(), id -> look());
        }
    }

    void stop(@Observes ShutdownEvent stopping, Vertx vertx) {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private void look() {
        KafkaConsumer<Object, Object> consumer = clients.getConsumer(KafkaCommands.CHANNEL);
        if (consumer == null) {
            return;
        }
        consumer.runOnPollingThread(kafka -> {
            Set<TopicPartition> assigned = kafka.assignment();
            Map<TopicPartition, Long> ends = kafka.endOffsets(assigned, Duration.ofSeconds(1));
            Map<TopicPartition, OffsetAndMetadata> committed = kafka.committed(assigned, Duration.ofSeconds(1));
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            ends.forEach((partition, end) -> {
                OffsetAndMetadata done = committed.get(partition);
                long behind = end - (done == null ? 0 : done.offset());
                rows.add(MultiGauge.Row.of(Tags.of("topic", partition.topic(), "partition", Integer.toString(partition.partition())),
                        Math.max(0, behind)));
            });
            return rows;
        }).subscribe().with(rows -> lag.register(rows, true),
                failure -> LOG.debugf("Kafka lag not read: %s", failure.toString()));
    }
}
