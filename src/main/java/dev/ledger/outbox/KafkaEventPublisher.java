package dev.ledger.outbox;

import dev.ledger.config.LedgerConfig;
import dev.ledger.tracing.TraceParent;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Publishes events to the Kafka topic {@code ledger.events.kafka.topic}: record key the account id (so
 * that one account's events share a partition, in order), header {@code event-type} the type,
 * {@code event-id} the event's id, the same JSON body as on RabbitMQ; acknowledged by every in-sync
 * replica, by the idempotent producer (its own retries within a batch neither duplicate nor reorder).
 * The topic is created at start when missing, with the broker's default partitions and replication;
 * readiness waits until it exists ({@link KafkaEventsReadinessCheck}).
 *
 * <p>Kafka's producer directly, not SmallRye's outgoing channel, for the reasons
 * {@link RabbitMqEventPublisher} gives: a batch's retries must be the relay's alone. A batch completes
 * when every record is acknowledged; on the first failure (or after the confirm timeout) the producer is
 * closed at once, which fails whatever it still held, so that nothing of an abandoned batch is sent
 * later behind the relay's back, and the next round opens a new one. Its calls block (metadata, a full
 * buffer), so they run on one thread of their own, never on an event loop. Connection settings are
 * Quarkus' {@code kafka.*} ones.
 */
@ApplicationScoped
public class KafkaEventPublisher implements EventPublisher {
    public static final String EVENT_TYPE = "event-type";
    public static final String EVENT_ID = "event-id";
    private static final Logger LOG = Logger.getLogger(KafkaEventPublisher.class);
    private static final Duration FIRST_RETRY = Duration.ofMillis(250);
    private static final Duration MAX_RETRY = Duration.ofSeconds(5);

    private final boolean enabled;
    private final String topic;
    private final Duration confirmTimeout;
    private final Map<String, Object> kafka;
    private final Tracer tracer;
    private final ScheduledThreadPoolExecutor thread = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread t = new Thread(runnable, "ledger-events-kafka");
        t.setDaemon(true);
        return t;
    });
    // Confined to the thread above.
    private KafkaProducer<byte[], byte[]> producer;
    private int failedChecks;
    private volatile boolean topicExists;

    public KafkaEventPublisher(LedgerConfig config, @Identifier("default-kafka-broker") Map<String, Object> kafka, Tracer tracer) {
        this.tracer = tracer;
        this.enabled = config.events().kafka().enabled();
        this.topic = config.events().kafka().topic();
        this.confirmTimeout = config.events().kafka().confirmTimeout();
        this.kafka = kafka;
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    void checkTopicAtStart(@Observes StartupEvent started) {
        if (enabled) {
            thread.execute(this::ensureTopic);
        }
    }

    @Override
    public String destination() {
        return "kafka";
    }

    @Override
    public boolean enabled() {
        return enabled;
    }

    /** Whether the topic exists (found or created since the start): readiness waits for it. */
    public boolean topicExists() {
        return topicExists;
    }

    public String topic() {
        return topic;
    }

    /** On the thread: finds the topic, creating it when missing, or tries again later while the broker is away. */
    private void ensureTopic() {
        if (topicExists || thread.isShutdown()) {
            return;
        }
        Map<String, Object> settings = new HashMap<>(kafka);
        settings.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) MAX_RETRY.toMillis());
        settings.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) MAX_RETRY.toMillis());
        try (Admin admin = Admin.create(settings)) {
            if (!admin.listTopics().names().get().contains(topic)) {
                try {
                    admin.createTopics(List.of(new NewTopic(topic, Optional.empty(), Optional.empty()))).all().get();
                    LOG.infof("Events: created Kafka topic %s (the broker's default partitions and replication)", topic);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
            topicExists = true;
            LOG.infof("Events: publishing to Kafka topic %s", topic);
        } catch (Exception | Error e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
                return;
            }
            long wait = Math.min(MAX_RETRY.toMillis(), FIRST_RETRY.toMillis() << Math.min(failedChecks++, 10));
            if (failedChecks == 1) {
                LOG.warnf("Events: cannot find or create Kafka topic %s (%s); not ready until it can, trying again", topic, e);
            }
            thread.schedule(this::ensureTopic, wait, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public Uni<Void> publish(List<OutgoingEvent> events) {
        if (events.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return Uni.createFrom().emitter(done -> thread.execute(() -> send(events, done)));
    }

    /** On the thread: sends the batch in order, then waits for each acknowledgement in order, within the confirm timeout. */
    private void send(List<OutgoingEvent> events, UniEmitter<? super Void> done) {
        int confirmed = 0;
        try {
            KafkaProducer<byte[], byte[]> open = producer();
            List<Future<RecordMetadata>> sent = new ArrayList<>(events.size());
            for (OutgoingEvent event : events) {
                // the publish, in the trace of the request that produced the event, when it was traced
                Span span = TraceParent.startProducer(tracer, topic + " publish", event.traceParent(), "kafka", topic);
                try {
                    sent.add(open.send(record(event, span)));
                } finally {
                    if (span != null) {
                        span.end();
                    }
                }
            }
            long deadline = System.nanoTime() + confirmTimeout.toNanos();
            for (Future<RecordMetadata> acknowledged : sent) {
                acknowledged.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                confirmed++;
            }
            done.complete(null);
        } catch (Exception | Error e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            abandon();
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            done.fail(new EventPublishException(confirmed,
                    "Kafka acknowledged " + confirmed + " of " + events.size() + " events: " + cause, cause));
        }
    }

    private ProducerRecord<byte[], byte[]> record(OutgoingEvent event, Span span) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(EVENT_TYPE, utf8(event.type()));
        headers.add(EVENT_ID, utf8(event.eventId().toString()));
        headers.add("content-type", utf8("application/json"));
        if (span != null) {
            headers.add(TraceParent.HEADER, utf8(TraceParent.of(span)));
        }
        return new ProducerRecord<>(topic, null, utf8(event.accountId().toString()), event.body(), headers);
    }

    private KafkaProducer<byte[], byte[]> producer() {
        if (producer == null) {
            Map<String, Object> settings = new HashMap<>(kafka);
            settings.put(ProducerConfig.CLIENT_ID_CONFIG, "ledger-events");
            settings.put(ProducerConfig.ACKS_CONFIG, "all");
            settings.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            // Within the confirm timeout, the producer's own retries (ordered, not duplicated); after it, the relay's.
            int timeout = (int) confirmTimeout.toMillis();
            settings.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeout);
            settings.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.max(1, timeout / 2));
            settings.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            settings.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Math.max(1, timeout / 2));
            producer = new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
        }
        return producer;
    }

    /** Closes the producer at once: records it still holds fail instead of being sent later. */
    private void abandon() {
        KafkaProducer<byte[], byte[]> closing = producer;
        producer = null;
        if (closing != null) {
            closing.close(Duration.ZERO);
        }
    }

    @PreDestroy
    void close() {
        thread.execute(this::abandon);
        thread.shutdown();
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
