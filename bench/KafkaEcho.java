import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Kafka's own limit for the commands scenario (bench/run.sh): the Kafka door's message flow without
 * PostgreSQL and Redis. It consumes ledger.commands.CLIENT in a group of its own and, for each record,
 * produces an outcome (the record's value, ledger-status 201, its idempotency-key) to
 * ledger.outcomes.CLIENT with acks=all and the idempotent producer, then commits the offsets once
 * every outcome of the poll is acknowledged. Run while KafkaCommandLoad produces and waits for the
 * outcomes; stopped by the caller.
 *
 * Usage: java -cp <kafka-clients...> bench/KafkaEcho.java BOOTSTRAP CLIENT
 */
public class KafkaEcho {
    public static void main(String[] args) {
        String client = args[1];
        Map<String, Object> consumerSettings = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                ConsumerConfig.GROUP_ID_CONFIG, "bench-echo",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<String, Object> producerSettings = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 0);
        try (KafkaConsumer<byte[], byte[]> commands = new KafkaConsumer<>(consumerSettings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
             KafkaProducer<byte[], byte[]> outcomes = new KafkaProducer<>(producerSettings, new ByteArraySerializer(), new ByteArraySerializer())) {
            commands.subscribe(List.of("ledger.commands." + client));
            byte[] created = "201".getBytes(StandardCharsets.UTF_8);
            while (!Thread.currentThread().isInterrupted()) {
                ConsumerRecords<byte[], byte[]> records = commands.poll(Duration.ofMillis(100));
                if (records.isEmpty()) {
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> command : records) {
                    ProducerRecord<byte[], byte[]> outcome = new ProducerRecord<>("ledger.outcomes." + client, command.key(), command.value());
                    outcome.headers().add("ledger-status", created);
                    Header key = command.headers().lastHeader("idempotency-key");
                    if (key != null) {
                        outcome.headers().add("idempotency-key", key.value());
                    }
                    outcomes.send(outcome);
                }
                outcomes.flush();
                commands.commitSync();
            }
        }
    }
}
