package dev.ledger.commands.kafka;

import dev.ledger.commands.CommandDoor;
import dev.ledger.config.LedgerConfig;
import dev.ledger.shard.Shards;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.IncomingKafkaRecord;
import io.smallrye.reactive.messaging.kafka.KafkaClientService;
import io.smallrye.reactive.messaging.kafka.KafkaConsumer;
import io.smallrye.reactive.messaging.kafka.KafkaConsumerRebalanceListener;
import io.smallrye.reactive.messaging.kafka.KafkaRecord;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.jboss.logging.Logger;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Order where it matters, concurrency elsewhere, and one shard's trouble kept to its own clients. Each record
 * goes into the lane of its topic, partition and key (the account id): a lane runs its records one at a time, in
 * offset order, so that one account's commands are never reordered inside the service (the sequence rule would
 * then refuse a late one as stale); different lanes run at once.
 *
 * <p>The records this instance holds (fetched by a poll and not settled yet, waiting in the connector or in a lane)
 * are counted per PostgreSQL shard ({@link Shards}): the shard of the client whose topic they came from, counted as
 * each poll returns them ({@link KafkaFetches}). Once a shard holds {@code ledger.messaging.kafka.max-held} of them (a
 * backlog, or its database away and its commands retried in place), the partitions of its clients' topics are
 * paused, and only those, before the next poll; they are resumed once it holds fewer. Every other shard's
 * records go on being fetched and run, and a shard holds at most its budget and one poll ({@code max.poll.records}, 500)
 * in memory. The connector itself never pauses (it would stop, then resume, every partition).
 *
 * <p>When partitions are revoked (a rebalance gave them to another consumer), their records that have not
 * started are dropped, and those under way stop at their next retry: the new owner receives them again
 * from the last committed offset. A record under way when its partition moved may still settle here; the
 * new owner's copy then waits for it, or replays it.
 */
@ApplicationScoped
@Identifier(KafkaLanes.NAME)
public class KafkaLanes implements KafkaConsumerRebalanceListener {
    static final String NAME = "ledger-commands-lanes";
    private static final Logger LOG = Logger.getLogger(KafkaLanes.class);
    private static final CompletionStage<Void> ADMITTED = CompletableFuture.completedFuture(null);
    /** How long a resume may wait for the polling thread before the poll under way is woken. */
    private static final long WAKE_AFTER_MS = 10;

    private final int capacity;
    private final Shards shards;
    private final CommandDoor door;
    private final KafkaClientService clients;
    private final Vertx vertx;
    private final Map<String, Lane> lanes = new HashMap<>();
    /** Each shard's budget, by shard name. */
    private final Map<String, Budget> budgets = new HashMap<>();
    /** The records held of each partition, and the shard they count against. */
    private final Map<TopicPartition, Held> held = new HashMap<>();
    /** The partitions this consumer paused; touched on the consumer's polling thread only. */
    private final Set<TopicPartition> paused = new HashSet<>();
    /** Whether a look at the budgets is queued on the polling thread and not started: a change meanwhile rides on it. */
    private final AtomicBoolean queued = new AtomicBoolean();

    public KafkaLanes(LedgerConfig config, Shards shards, CommandDoor door, KafkaClientService clients, Vertx vertx,
                      MeterRegistry metrics) {
        this.capacity = config.messaging().kafka().maxHeld();
        this.shards = shards;
        this.door = door;
        this.clients = clients;
        this.vertx = vertx;
        for (String shard : shards.all().keySet()) {
            Budget budget = new Budget();
            budgets.put(shard, budget);
            String[] tags = shards.several() ? new String[] {"shard", shard} : new String[0];
            Gauge.builder("ledger.commands.held", budget, each -> each.held)
                    .description("Kafka commands this instance holds: fetched, and not settled yet")
                    .tags(tags).register(metrics);
            Gauge.builder("ledger.commands.paused.partitions", budget, each -> each.pausedPartitions)
                    .description("Kafka partitions of commands paused because their shard holds ledger.messaging.kafka.max-held commands")
                    .tags(tags).register(metrics);
        }
    }

    /** A record in a lane, until it is settled, given up, or its partition is revoked. */
    public static final class Job {
        private final KafkaRecord<byte[], byte[]> record;
        private final TopicPartition partition;
        private volatile boolean revoked;

        Job(KafkaRecord<byte[], byte[]> record) {
            this.record = record;
            this.partition = new TopicPartition(record.getTopic(), record.getPartition());
        }

        public KafkaRecord<byte[], byte[]> record() {
            return record;
        }

        /** Whether the record's partition went to another consumer: it is not tried again here. */
        public boolean revoked() {
            return revoked;
        }
    }

    private static final class Lane {
        final Queue<Job> waiting = new ArrayDeque<>();
        Job running;
    }

    /** One shard's records held, and whether its partitions are to be paused. */
    private static final class Budget {
        volatile int held;
        boolean full;
        volatile int pausedPartitions;
    }

    /** One partition's records held. */
    private static final class Held {
        final String shard;
        int count;

        Held(String shard) {
            this.shard = shard;
        }
    }

    /**
     * What a poll returned, on the polling thread before the poll returns: counted against each shard, and a shard
     * that now holds its budget has its partitions paused before the next poll.
     */
    void fetched(ConsumerRecords<?, ?> records) {
        boolean look = false;
        synchronized (this) {
            for (TopicPartition partition : records.partitions()) {
                int count = records.records(partition).size();
                Held of = held.computeIfAbsent(partition, ignored -> new Held(shardOf(partition.topic())));
                of.count += count;
                Budget budget = budgets.computeIfAbsent(of.shard, ignored -> new Budget());
                budget.held += count;
                if (!budget.full && budget.held >= capacity) {
                    budget.full = look = true;
                    LOG.debugf("Kafka commands of shard %s: %d held, its partitions paused", of.shard, budget.held);
                }
                // a partition paused here that returned records was resumed by someone else: paused again
                look |= paused.contains(partition);
            }
        }
        if (look) {
            look(false); // queued on the polling thread now, so before the next poll
        }
    }

    /**
     * Puts the record in its lane, starting it with {@code run} when the lane is free (and each next one when the
     * one before completes). Answers at once: the budgets are kept by pausing partitions, not by the connector.
     */
    CompletionStage<Void> admit(KafkaRecord<byte[], byte[]> record, Function<Job, CompletionStage<Void>> run) {
        Job job = new Job(record);
        String name = laneOf(record);
        boolean start;
        synchronized (this) {
            Lane lane = lanes.computeIfAbsent(name, ignored -> new Lane());
            start = lane.running == null;
            if (start) {
                lane.running = job;
            } else {
                lane.waiting.add(job);
            }
        }
        if (start) {
            start(name, job, run);
        }
        return ADMITTED;
    }

    private void start(String name, Job job, Function<Job, CompletionStage<Void>> run) {
        run.apply(job).whenComplete((ignored, failure) -> {
            Job next = finished(name, job);
            if (next != null) {
                start(name, next, run);
            }
        });
    }

    /** The job is over: the next of its lane, if any, is answered (null when the lane is empty or gone). */
    private Job finished(String name, Job job) {
        Job next = null;
        boolean resume;
        synchronized (this) {
            resume = release(job.partition, 1);
            Lane lane = lanes.get(name);
            if (lane != null && lane.running == job) {
                next = lane.waiting.poll();
                lane.running = next;
                if (next == null) {
                    lanes.remove(name);
                }
            }
        }
        if (resume) {
            look(true);
        }
        return next;
    }

    /**
     * {@code count} records of the partition are no longer held; answers whether their shard, full until now, has
     * room again. Under the lock.
     */
    private boolean release(TopicPartition partition, int count) {
        Held of = held.get(partition);
        if (of == null || count <= 0) {
            return false; // a record counted before a rebalance recounted its partition
        }
        int released = Math.min(count, of.count);
        of.count -= released;
        if (of.count == 0) {
            held.remove(partition);
        }
        Budget budget = budgets.get(of.shard);
        budget.held -= released;
        if (budget.full && budget.held < capacity) {
            budget.full = false;
            LOG.debugf("Kafka commands of shard %s: %d held, its partitions resumed", of.shard, budget.held);
            return true;
        }
        return false;
    }

    /**
     * Pauses and resumes partitions as the budgets say, on the consumer's polling thread (once for any number of
     * changes meanwhile). A resume that has not run after {@link #WAKE_AFTER_MS} waits behind a poll: with the full
     * shard's partitions paused and the others quiet, the poll would wait out its whole timeout (a second), so it is
     * woken (the connector takes a woken poll as an empty one). Not at once: a wake-up that finds no poll under way
     * would fail the thread's next call to the broker instead, such as an offset commit (retried at the next one).
     */
    private void look(boolean resuming) {
        KafkaConsumer<Object, Object> consumer = clients.getConsumer(KafkaCommands.CHANNEL);
        if (consumer == null) {
            return;
        }
        if (queued.compareAndSet(false, true)) {
            consumer.runOnPollingThread(kafka -> {
                queued.set(false);
                apply(kafka);
            }).subscribe().with(ignored -> { }, failure -> {
                queued.set(false);
                LOG.warnf("Kafka partitions not paused or resumed as the lanes ask (%s); the next change does it", failure.toString());
            });
        }
        if (resuming) {
            vertx.setTimer(WAKE_AFTER_MS, ignored -> {
                if (queued.get()) {
                    consumer.unwrap().wakeup();
                }
            });
        }
    }

    /** On the polling thread: every assigned partition of a full shard paused, every other that was paused here resumed. */
    private void apply(Consumer<?, ?> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        Set<TopicPartition> wanted = new HashSet<>();
        Map<String, Integer> byShard = new HashMap<>();
        synchronized (this) {
            for (TopicPartition partition : assigned) {
                String shard = shardOf(partition.topic());
                Budget budget = budgets.get(shard);
                if (budget != null && budget.full) {
                    wanted.add(partition);
                    byShard.merge(shard, 1, Integer::sum);
                }
            }
            budgets.forEach((shard, budget) -> budget.pausedPartitions = byShard.getOrDefault(shard, 0));
            Set<TopicPartition> resumed = new HashSet<>(paused);
            resumed.removeAll(wanted);
            resumed.retainAll(assigned);
            consumer.pause(wanted);
            consumer.resume(resumed);
            paused.clear();
            paused.addAll(wanted);
        }
    }

    /** The shard of the client whose commands a topic carries. */
    private String shardOf(String topic) {
        return shards.shardOf(door.clientOf(KafkaTopics.clientOf(topic).orElse("")));
    }

    /**
     * The connector has dropped the revoked partitions' records it had not handed over; those waiting in a lane are
     * dropped here. What stays held of such a partition is its record under way, if any, until it ends.
     */
    @Override
    public void onPartitionsRevoked(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        boolean resume = false;
        synchronized (this) {
            Map<TopicPartition, Integer> underWay = new HashMap<>();
            for (Lane lane : lanes.values()) {
                if (lane.running != null && partitions.contains(lane.running.partition)) {
                    lane.running.revoked = true;
                    underWay.merge(lane.running.partition, 1, Integer::sum);
                    // the ones waiting behind it are not started: the new owner receives them
                    lane.waiting.forEach(job -> job.revoked = true);
                    lane.waiting.clear();
                }
            }
            for (TopicPartition partition : partitions) {
                Held of = held.get(partition);
                if (of != null) {
                    resume |= release(partition, of.count - underWay.getOrDefault(partition, 0));
                }
            }
            paused.removeAll(partitions);
        }
        if (resume) {
            look(true);
        }
    }

    @Override
    public void onPartitionsAssigned(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        apply(consumer);
    }

    @Override
    public void onPartitionsLost(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        onPartitionsRevoked(consumer, partitions);
    }

    private static String laneOf(KafkaRecord<byte[], byte[]> record) {
        String key = record.getKey() == null ? "@" + ((IncomingKafkaRecord<?, ?>) record).getOffset() : HexFormat.of().formatHex(record.getKey());
        return record.getTopic() + "/" + record.getPartition() + "/" + key;
    }
}
