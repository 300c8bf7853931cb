package dev.ledger.testing;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The tests' Kafka broker: started by the project's own script ({@code .ci/kafka}, on
 * {@code tests.kafka.port}, 19192 unless set) the first time a test asks for it in this JVM, and stopped by
 * PID when the JVM ends if this JVM started it. Plain clients of it as a producer of commands and a
 * reader of outcomes.
 */
public final class KafkaBroker {
    public static final int PORT = Integer.getInteger("tests.kafka.port", 19192);
    private static boolean started;

    private KafkaBroker() {
    }

    /** {@code bootstrap.servers} of the running broker, starting it first when it is not running. */
    public static synchronized String bootstrap() {
        if (!started) {
            boolean running = script("status") == 0;
            if (!running) {
                if (script("start") != 0) {
                    throw new IllegalStateException("The tests' Kafka broker did not start: see /tmp/ledger-kafka-" + PORT + "/kafka.log");
                }
                Runtime.getRuntime().addShutdownHook(new Thread(() -> script("stop")));
            }
            started = true;
        }
        return "127.0.0.1:" + PORT;
    }

    /** SIGKILL, as when its machine dies; {@link #start()} brings it back with its data. */
    public static void kill() {
        script("kill");
    }

    public static void start() {
        if (script("start") != 0) {
            throw new IllegalStateException("The tests' Kafka broker did not start again");
        }
    }

    private static int script(String command) {
        try {
            ProcessBuilder builder = new ProcessBuilder("bash", ".ci/kafka", command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(new File("target/kafka-script.log")));
            builder.environment().put("KAFKA_PORT", Integer.toString(PORT));
            Process process = builder.start();
            if (!process.waitFor(180, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return -1;
            }
            return process.exitValue();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    public static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()));
    }

    /** A producer as a client's: every record acknowledged by the broker, no duplicates of its own. */
    public static KafkaProducer<byte[], byte[]> producer() {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        properties.put(ProducerConfig.ACKS_CONFIG, "all");
        properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(properties);
    }

    /** A command record: {@code key} the account id, headers as name, value pairs (a null value leaves the header out). */
    public static ProducerRecord<byte[], byte[]> command(String client, String key, String body, String... headers) {
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>("ledger.commands." + client,
                key == null ? null : key.getBytes(StandardCharsets.UTF_8), body.getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i + 1 < headers.length; i += 2) {
            if (headers[i + 1] != null) {
                record.headers().add(headers[i], headers[i + 1].getBytes(StandardCharsets.UTF_8));
            }
        }
        return record;
    }

    /** A reader of {@code topic} from its beginning, in a group of its own. */
    public static Reader reader(String topic) {
        return new Reader(consumer(topic));
    }

    /** A consumer of {@code topic} from its beginning, in a group of its own. */
    public static KafkaConsumer<byte[], byte[]> consumer(String topic) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, "ledger-tests-" + UUID.randomUUID());
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties);
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /** What a reader received: key, value and headers as text. */
    public record Received(String topic, int partition, long offset, String key, String value, Map<String, String> headers) {
        static Received of(ConsumerRecord<byte[], byte[]> record) {
            Map<String, String> headers = new java.util.LinkedHashMap<>();
            for (Header header : record.headers()) {
                headers.put(header.key(), header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8));
            }
            // What the service produced is checked against the AsyncAPI document as it is received.
            String message = AsyncApiContract.kafkaMessageOf(record.topic(), headers);
            String key = record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8);
            if (message != null) {
                AsyncApiContract.kafka(message, key, headers, record.value() == null ? new byte[0] : record.value());
            }
            return new Received(record.topic(), record.partition(), record.offset(), key,
                    record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8), headers);
        }

        public String header(String name) {
            return headers.get(name);
        }

        public int status() {
            return Integer.parseInt(headers.get("ledger-status"));
        }
    }

    /** A consumer of one topic that keeps everything it received, in order. */
    public static final class Reader implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final List<Received> received = new ArrayList<>();

        Reader(KafkaConsumer<byte[], byte[]> consumer) {
            this.consumer = consumer;
        }

        /** Polls until at least {@code count} records matching {@code filter} arrived, within {@code bound}; answers them. */
        public List<Received> await(int count, java.util.function.Predicate<Received> filter, Duration bound) {
            long end = System.nanoTime() + bound.toNanos();
            while (true) {
                List<Received> matching = received.stream().filter(filter).toList();
                if (matching.size() >= count) {
                    return matching;
                }
                if (System.nanoTime() > end) {
                    throw new AssertionError("expected " + count + " records, got " + matching.size() + ": " + matching);
                }
                consumer.poll(Duration.ofMillis(200)).forEach(record -> received.add(Received.of(record)));
            }
        }

        /** Everything that arrives within {@code window} (for checking that nothing more comes). */
        public List<Received> drain(java.util.function.Predicate<Received> filter, Duration window) {
            long end = System.nanoTime() + window.toNanos();
            while (System.nanoTime() < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(record -> received.add(Received.of(record)));
            }
            return received.stream().filter(filter).toList();
        }

        @Override
        public void close() {
            consumer.close(Duration.ofSeconds(5));
        }
    }
}
