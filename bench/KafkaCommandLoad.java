import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The benchmark's commands scenario over Kafka (bench/run.sh): produces COUNT payment commands to
 * ledger.commands.CLIENT, one credit per command over the seeded accounts in turn (record key the
 * account, header idempotency-key its own key), and times until every outcome has arrived on
 * ledger.outcomes.CLIENT. Prints the same BENCH line as CommandLoad (RabbitMQ): commands/s, the
 * outcomes by status, and the machine's busy clock ticks over the timed window (from the first send
 * to the last outcome: not the JVM's own start).
 *
 * Usage: java -cp <kafka-clients...> bench/KafkaCommandLoad.java BOOTSTRAP CLIENT ACCOUNTS-FILE COUNT RUN-ID SEQ-BASE
 */
public class KafkaCommandLoad {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String client = args[1];
        List<String> accounts = Files.readAllLines(Path.of(args[2]));
        int count = Integer.parseInt(args[3]);
        String run = args[4];
        long sequenceBase = Long.parseLong(args[5]);
        String keyPrefix = "bench-kafka-" + run + "-";

        Map<String, Object> consumerSettings = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "bench-outcomes-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        Map<String, Object> producerSettings = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaConsumer<byte[], byte[]> outcomes = new KafkaConsumer<>(consumerSettings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerSettings, new ByteArraySerializer(), new ByteArraySerializer())) {
            outcomes.subscribe(List.of("ledger.outcomes." + client));
            // joined and positioned at the end before the first command leaves
            long joinBy = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (outcomes.assignment().isEmpty() && System.nanoTime() < joinBy) {
                outcomes.poll(Duration.ofMillis(100));
            }
            outcomes.seekToEnd(outcomes.assignment());
            outcomes.assignment().forEach(outcomes::position);

            Map<Integer, Integer> byStatus = new TreeMap<>();
            int received = 0;
            long startTicks = machineTicks();
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                String account = accounts.get(i % accounts.size());
                long sequence = sequenceBase + i / accounts.size();
                String body = "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":1,\"sequence\":" + sequence + "}";
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>("ledger.commands." + client,
                        account.getBytes(StandardCharsets.UTF_8), body.getBytes(StandardCharsets.UTF_8));
                record.headers().add("idempotency-key", (keyPrefix + i).getBytes(StandardCharsets.UTF_8));
                producer.send(record);
                if (i % 500 == 499) {
                    received += take(outcomes, keyPrefix, byStatus, Duration.ZERO);
                }
            }
            producer.flush();
            long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
            while (received < count && System.nanoTime() < deadline) {
                received += take(outcomes, keyPrefix, byStatus, Duration.ofMillis(100));
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long ticks = machineTicks() - startTicks;
            int created = byStatus.getOrDefault(201, 0);
            System.out.printf("BENCH commands=%d outcomes=%d rps=%.1f expected_share=%.4f seconds=%.2f statuses=%s complete=%s machine_ticks=%d%n",
                    count, received, received / seconds, created / (double) count, seconds, byStatus, received >= count, ticks);
        }
    }

    /** The outcomes of this run's commands among what one poll brings, counted by status. */
    private static int take(KafkaConsumer<byte[], byte[]> outcomes, String keyPrefix, Map<Integer, Integer> byStatus, Duration wait) {
        int taken = 0;
        for (ConsumerRecord<byte[], byte[]> outcome : outcomes.poll(wait)) {
            Header key = outcome.headers().lastHeader("idempotency-key");
            Header status = outcome.headers().lastHeader("ledger-status");
            if (key != null && status != null && new String(key.value(), StandardCharsets.UTF_8).startsWith(keyPrefix)) {
                byStatus.merge(Integer.parseInt(new String(status.value(), StandardCharsets.UTF_8)), 1, Integer::sum);
                taken++;
            }
        }
        return taken;
    }

    /** The whole machine's busy clock ticks so far (user, nice, system, irq, softirq), as bench/run.sh counts them. */
    private static long machineTicks() throws java.io.IOException {
        String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        return Long.parseLong(cpu[1]) + Long.parseLong(cpu[2]) + Long.parseLong(cpu[3]) + Long.parseLong(cpu[6])
                + Long.parseLong(cpu[7]);
    }
}
