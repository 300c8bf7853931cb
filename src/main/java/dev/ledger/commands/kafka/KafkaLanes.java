package dev.ledger.commands.kafka;

import dev.ledger.config.LedgerConfig;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.reactive.messaging.kafka.IncomingKafkaRecord;
import io.smallrye.reactive.messaging.kafka.KafkaConsumerRebalanceListener;
import io.smallrye.reactive.messaging.kafka.KafkaRecord;
import jakarta.enterprise.context.ApplicationScoped;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Order where it matters, concurrency elsewhere. Each record goes into the lane of its topic, partition
 * and key (the account id): a lane runs its records one at a time, in offset order, so that one
 * account's commands are never reordered inside the service (the sequence rule would then refuse a late
 * one as stale); different lanes run at once. At most {@code ledger.messaging.prefetch} records are in
 * the lanes: past that, the connector is not asked for more, and stops fetching (its
 * {@code pause-if-no-requests}), so a backlog, or commands retried in place while a dependency is away,
 * hold no more than that in memory.
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

    private final int capacity;
    private final Map<String, Lane> lanes = new HashMap<>();
    private int admitted;
    private CompletableFuture<Void> room;

    public KafkaLanes(LedgerConfig config) {
        this.capacity = config.messaging().prefetch();
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

    /**
     * Puts the record in its lane, starting it with {@code run} when the lane is free (and each next one
     * when the one before completes); answers when there is room for another record.
     */
    CompletionStage<Void> admit(KafkaRecord<byte[], byte[]> record, Function<Job, CompletionStage<Void>> run) {
        Job job = new Job(record);
        String name = laneOf(record);
        boolean start;
        CompletionStage<Void> answer;
        synchronized (this) {
            admitted++;
            Lane lane = lanes.computeIfAbsent(name, ignored -> new Lane());
            start = lane.running == null;
            if (start) {
                lane.running = job;
            } else {
                lane.waiting.add(job);
            }
            if (admitted < capacity) {
                answer = CompletableFuture.completedFuture(null);
            } else {
                room = new CompletableFuture<>();
                answer = room;
            }
        }
        if (start) {
            start(name, job, run);
        }
        return answer;
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
        CompletableFuture<Void> freed = null;
        Job next = null;
        synchronized (this) {
            admitted--;
            Lane lane = lanes.get(name);
            if (lane != null && lane.running == job) {
                next = lane.waiting.poll();
                lane.running = next;
                if (next == null) {
                    lanes.remove(name);
                }
            }
            if (room != null && admitted < capacity) {
                freed = room;
                room = null;
            }
        }
        if (freed != null) {
            freed.complete(null);
        }
        return next;
    }

    /** Records in the lanes now (tests and metrics). */
    synchronized int admitted() {
        return admitted;
    }

    @Override
    public void onPartitionsRevoked(Consumer<?, ?> consumer, Collection<TopicPartition> partitions) {
        CompletableFuture<Void> freed = null;
        synchronized (this) {
            for (Lane lane : lanes.values()) {
                if (lane.running != null && partitions.contains(lane.running.partition)) {
                    lane.running.revoked = true;
                    // the ones waiting behind it are not started: the new owner receives them
                    admitted -= lane.waiting.size();
                    lane.waiting.forEach(job -> job.revoked = true);
                    lane.waiting.clear();
                }
            }
            if (room != null && admitted < capacity) {
                freed = room;
                room = null;
            }
        }
        if (freed != null) {
            freed.complete(null);
        }
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
