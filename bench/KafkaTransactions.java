import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/**
 * What Kafka transactions would cost the Kafka door's outcomes (issue 25, item 8), without PostgreSQL and
 * Redis, as bench/KafkaEcho.java measures the door's flow today. Each run produces COUNT command records
 * (key an account among 1,000, value a credit's JSON) to a new topic of 4 partitions beforehand, then
 * consumes them in a group of its own, at most 64 a poll (the service's Kafka budget then, ledger.messaging.kafka.max-held), and
 * produces one outcome per record (the command's value, ledger-status 201) to a new outcome topic, in a mode:
 * <ul>
 *   <li>{@code a}: today's flow: idempotent producer, acks=all; the poll's offsets committed once all its
 *       outcomes are acknowledged (KafkaEcho);</li>
 *   <li>{@code b}: one transaction per record, one at a time (begin, send, sendOffsetsToTransaction,
 *       commit): SmallRye's KafkaTransactions.withTransaction per message;</li>
 *   <li>{@code c}: one transaction per poll (its outcomes and offsets), as a hand-written loop could.</li>
 * </ul>
 * A mode may carry a work time, {@code c:2}: each record then waits a time of its own before its outcome
 * (exponential, median 2 ms, the same for the same record in every mode), as the service's commands wait on
 * PostgreSQL; the records of a poll wait at once (a and c, as the service's lanes run them), or one after
 * the other (b: one transaction at a time). {@code crash-a}, {@code crash-b}, {@code crash-c}: the mode
 * with one crash half-way, after a poll's outcomes are acknowledged (and, in b and c, its offsets sent to
 * the transaction) but before the offsets are committed: the consumer and the producer are dropped
 * without committing (the transactional one closed at once, so the broker holds an open transaction) and
 * new ones in the same group and with the same transactional.id take over.
 *
 * A reader in this process (read_committed, no group) reads the outcome topic throughout: the latency is
 * from the poll that handed a record to the loop to its outcome read by that reader; the rate is COUNT
 * over the time from the first poll to the last outcome read. CPU is that of this process (the reader's
 * own share apart) and of the broker (pid from BROKER-PID-FILE, the file .ci/kafka writes), from
 * /proc/PID/stat over the same window. Each run checks what the reader saw: exactly one outcome per
 * command record, or how many duplicates and missing; a crash run also counts the outcomes in the log
 * that a read_uncommitted reader sees (those of aborted transactions too).
 *
 * The BENCH line of a run also gives the mean time of each step per transaction (per poll in a): produce
 * (the records handled and their outcomes acknowledged), offsets (sendOffsetsToTransaction), commit
 * (commitTransaction, or commitSync in a).
 *
 * Before the runs, every distinct mode runs once on a backlog of max(1000, COUNT/10) (-Dwarmup=N),
 * not reported. Other settings: -Dpartitions=4, -Dbatch=64 (max.poll.records), -Dtimeout=300 (s a run).
 *
 * Usage: java -cp "$HOME/.cache/ledger-kafka/4.1.1/libs/*" bench/KafkaTransactions.java BOOTSTRAP BROKER-PID-FILE COUNT [MODE...]
 * (modes by default: a b c c:2 a:2)
 */
public class KafkaTransactions {
    static final int ACCOUNTS = 1000;
    static final int PARTITIONS = Integer.getInteger("partitions", 4);
    static final int BATCH = Integer.getInteger("batch", 64);
    static final Duration TIMEOUT = Duration.ofSeconds(Integer.getInteger("timeout", 300));
    static final String INDEX = "bench-index";
    static final byte[] CREATED = "201".getBytes(StandardCharsets.UTF_8);
    static final long TICK_NANOS = 10_000_000L; // CLK_TCK 100

    static String bootstrap;
    static long brokerPid;

    /** A mode: the kind of loop (a, b, c), the records' median work time, and whether it crashes once. */
    record Mode(char kind, double workMs, boolean crash) {
        static Mode parse(String text) {
            boolean crash = text.startsWith("crash-");
            String rest = crash ? text.substring("crash-".length()) : text;
            String[] parts = rest.split(":");
            if (parts[0].length() != 1 || "abc".indexOf(parts[0].charAt(0)) < 0) {
                throw new IllegalArgumentException("unknown mode " + text + " (a, b, c, optionally :WORK-MS, or crash-a, crash-b, crash-c)");
            }
            return new Mode(parts[0].charAt(0), parts.length > 1 ? Double.parseDouble(parts[1]) : 0, crash);
        }

        boolean transactional() {
            return kind != 'a';
        }

        @Override
        public String toString() {
            return (crash ? "crash-" : "") + kind + (workMs > 0 ? ":" + workMs : "");
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        brokerPid = Long.parseLong(Files.readString(Path.of(args[1])).trim());
        int count = Integer.parseInt(args[2]);
        List<String> names = args.length > 3 ? Arrays.asList(args).subList(3, args.length) : List.of("a", "b", "c", "c:2", "a:2");
        List<Mode> modes = names.stream().map(Mode::parse).toList();
        String id = Long.toString(System.currentTimeMillis(), 36);

        int warmup = Integer.getInteger("warmup", Math.max(1000, count / 10));
        int run = 0;
        for (Mode mode : new LinkedHashSet<>(modes)) {
            if (!mode.crash()) {
                Result r = run(mode, warmup, id + "-w" + run++);
                System.out.println("warm-up " + r.line());
            }
        }
        List<Result> results = new ArrayList<>();
        for (Mode mode : modes) {
            Result r = run(mode, count, id + "-" + run++);
            System.out.println(r.line());
            results.add(r);
        }
        System.out.println();
        System.out.println("| mode | work ms (median) | records | records/s | p50 ms | p99 ms | bench CPU ms/record (its reader) | broker CPU ms/record | transactions | read_committed saw |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
        for (Result r : results) {
            System.out.println(r.row());
        }
    }

    /** One run: a backlog of COUNT commands on new topics, consumed in MODE while the reader times the outcomes. */
    static Result run(Mode mode, int count, String name) throws Exception {
        String commands = "bench-tx." + name + ".commands";
        String outcomes = "bench-tx." + name + ".outcomes";
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(commands, PARTITIONS, (short) 1), new NewTopic(outcomes, PARTITIONS, (short) 1)))
                    .all().get();
            // The controller has the topics before the broker has their logs: an idempotent producer that sends
            // at once may see its first batches refused and a later one taken, and then retries the first ones
            // out of sequence until its delivery timeout. The broker answers ListOffsets once the logs exist.
            Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
            for (String topic : List.of(commands, outcomes)) {
                partitionsOf(topic).forEach(p -> ends.put(p, OffsetSpec.latest()));
            }
            admin.listOffsets(ends).all().get();
        }
        produceBacklog(commands, count);

        Window window = new Window();
        Reader reader = new Reader(outcomes, count, window);
        Thread readerThread = new Thread(reader, "outcome-reader");
        readerThread.start();
        Loop loop = new Loop(mode, count, name, commands, outcomes, window);
        loop.run();
        reader.loopDone = true;
        readerThread.join();
        window.stop();
        int physical = mode.crash() ? physicalOutcomes(outcomes) : -1;
        return new Result(mode, count, window, reader, loop, physical);
    }

    /** COUNT credits over the accounts in turn, each with its own idempotency-key and its index in the backlog. */
    static void produceBacklog(String topic, int count) {
        AtomicReference<Exception> failed = new AtomicReference<>();
        List<String> accounts = IntStream.range(0, ACCOUNTS).mapToObj(i -> new UUID(0x1ed9e7L, i).toString()).toList();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.LINGER_MS_CONFIG, 5), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                String account = accounts.get(i % ACCOUNTS);
                String body = "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":1,\"sequence\":" + (1 + i / ACCOUNTS) + "}";
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, account.getBytes(StandardCharsets.UTF_8),
                        body.getBytes(StandardCharsets.UTF_8));
                record.headers().add("idempotency-key", ("bench-tx-" + topic + "-" + i).getBytes(StandardCharsets.UTF_8));
                record.headers().add(INDEX, ByteBuffer.allocate(4).putInt(i).array());
                producer.send(record, (metadata, failure) -> {
                    if (failure != null) {
                        failed.compareAndSet(null, failure);
                    }
                });
            }
            producer.flush();
        }
        if (failed.get() != null) {
            throw new IllegalStateException("the backlog was not produced", failed.get());
        }
    }

    static List<TopicPartition> partitionsOf(String topic) {
        return IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(topic, p)).toList();
    }

    static int indexOf(ConsumerRecord<byte[], byte[]> record) {
        return ByteBuffer.wrap(record.headers().lastHeader(INDEX).value()).getInt();
    }

    /** The door's loop in one mode: consume the backlog, produce the outcomes, commit, until every record is committed. */
    static final class Loop {
        final Mode mode;
        final int count;
        final String name;
        final String commands;
        final String outcomes;
        final Window window;
        final long[] takenAt;
        final BitSet committed = new BitSet();
        final ScheduledExecutorService work = Executors.newSingleThreadScheduledExecutor();
        KafkaConsumer<byte[], byte[]> consumer;
        KafkaProducer<byte[], byte[]> producer;
        int transactions;
        int polls;
        int handled;
        boolean crashed;
        long produceNanos;
        long offsetsNanos;
        long commitNanos;

        Loop(Mode mode, int count, String name, String commands, String outcomes, Window window) {
            this.mode = mode;
            this.count = count;
            this.name = name;
            this.commands = commands;
            this.outcomes = outcomes;
            this.window = window;
            this.takenAt = new long[count];
        }

        void run() {
            open();
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            try {
                while (committed.cardinality() < count && System.nanoTime() < deadline) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    if (records.isEmpty()) {
                        continue;
                    }
                    window.start();
                    polls++;
                    long now = System.nanoTime();
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        int i = indexOf(record);
                        if (takenAt[i] == 0) {
                            takenAt[i] = now;
                        }
                    }
                    List<ConsumerRecord<byte[], byte[]>> polled = new ArrayList<>(records.count());
                    records.forEach(polled::add);
                    switch (mode.kind()) {
                        case 'a' -> atLeastOnce(polled);
                        case 'b' -> {
                            boolean crashedBefore = crashed;
                            for (ConsumerRecord<byte[], byte[]> record : polled) {
                                transaction(List.of(record));
                                if (crashed != crashedBefore) {
                                    break; // the rest of the poll is delivered again to the new consumer
                                }
                            }
                        }
                        default -> transaction(polled);
                    }
                }
            } finally {
                consumer.close();
                producer.close();
                work.shutdownNow();
            }
        }

        void open() {
            Map<String, Object> consumerSettings = Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ConsumerConfig.GROUP_ID_CONFIG, "bench-tx-" + name,
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                    ConsumerConfig.MAX_POLL_RECORDS_CONFIG, BATCH,
                    // offsets committed in a transaction are read once it is settled (KIP-447)
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            Map<String, Object> producerSettings = new HashMap<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                    ProducerConfig.LINGER_MS_CONFIG, 0));
            if (mode.transactional()) {
                producerSettings.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "bench-tx-" + name);
            }
            consumer = new KafkaConsumer<>(consumerSettings, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            producer = new KafkaProducer<>(producerSettings, new ByteArraySerializer(), new ByteArraySerializer());
            if (mode.transactional()) {
                // fences a producer of the same transactional.id and aborts its open transaction
                producer.initTransactions();
            }
            consumer.subscribe(List.of(commands));
        }

        /** (a) every outcome of the poll acknowledged, then the poll's offsets committed. */
        void atLeastOnce(List<ConsumerRecord<byte[], byte[]>> records) {
            produce(records);
            if (crashNow()) {
                return;
            }
            long t = System.nanoTime();
            consumer.commitSync(offsets(records));
            commitNanos += System.nanoTime() - t;
            settled(records);
        }

        /**
         * (b) and (c): the records' outcomes and offsets in one transaction, committed once all are acknowledged
         * (in c, once the slowest record of the poll is done).
         */
        void transaction(List<ConsumerRecord<byte[], byte[]>> records) {
            producer.beginTransaction();
            produce(records);
            long t = System.nanoTime();
            producer.sendOffsetsToTransaction(offsets(records), consumer.groupMetadata());
            offsetsNanos += System.nanoTime() - t;
            if (crashNow()) {
                return;
            }
            t = System.nanoTime();
            producer.commitTransaction();
            commitNanos += System.nanoTime() - t;
            transactions++;
            settled(records);
        }

        /** Every record handled (at once, but in b one after the other), until the broker acknowledged every outcome. */
        void produce(List<ConsumerRecord<byte[], byte[]>> records) {
            long t = System.nanoTime();
            CompletableFuture.allOf(records.stream().map(this::handle).toArray(CompletableFuture[]::new)).join();
            produceNanos += System.nanoTime() - t;
        }

        /** The record's work (none, or its wait), then its outcome produced; completes when the broker acknowledged it. */
        CompletableFuture<Void> handle(ConsumerRecord<byte[], byte[]> command) {
            handled++;
            ProducerRecord<byte[], byte[]> outcome = new ProducerRecord<>(outcomes, command.key(), command.value());
            outcome.headers().add("ledger-status", CREATED);
            for (String header : List.of("idempotency-key", INDEX)) {
                Header h = command.headers().lastHeader(header);
                outcome.headers().add(header, h.value());
            }
            CompletableFuture<Void> acknowledged = new CompletableFuture<>();
            Runnable send = () -> producer.send(outcome, (metadata, failure) -> {
                if (failure != null) {
                    acknowledged.completeExceptionally(failure);
                } else {
                    acknowledged.complete(null);
                }
            });
            long wait = workNanos(indexOf(command));
            if (wait == 0) {
                send.run();
            } else if (mode.kind() == 'b') {
                sleep(wait);
                send.run();
            } else {
                work.schedule(send, wait, TimeUnit.NANOSECONDS);
            }
            return acknowledged;
        }

        /** Record i's work time: exponential with the mode's median, the same for record i in every mode. */
        long workNanos(int i) {
            if (mode.workMs() == 0) {
                return 0;
            }
            double u = new SplittableRandom(i).nextDouble();
            return (long) (-Math.log1p(-u) / Math.log(2) * mode.workMs() * 1e6);
        }

        /**
         * In a crash run, once half the backlog is committed: the consumer and producer dropped without a
         * commit (the transactional producer at once, its transaction left open), new ones take over.
         */
        boolean crashNow() {
            if (!mode.crash() || crashed || committed.cardinality() < count / 2) {
                return false;
            }
            crashed = true;
            producer.close(Duration.ZERO);
            // an orderly leave, so that the new consumer need not wait out the old one's session; it commits nothing
            consumer.close();
            open();
            return true;
        }

        void settled(List<ConsumerRecord<byte[], byte[]>> records) {
            for (ConsumerRecord<byte[], byte[]> record : records) {
                committed.set(indexOf(record));
            }
        }

        /** Past the last of the records in each partition. */
        static Map<TopicPartition, OffsetAndMetadata> offsets(List<ConsumerRecord<byte[], byte[]>> records) {
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                offsets.merge(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1),
                        (a, b) -> a.offset() >= b.offset() ? a : b);
            }
            return offsets;
        }

        static void sleep(long nanos) {
            long until = System.nanoTime() + nanos;
            while (System.nanoTime() < until) {
                try {
                    TimeUnit.NANOSECONDS.sleep(until - System.nanoTime());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** The outcome topic read as a client reads it (read_committed): when each outcome became visible, and how many of each. */
    static final class Reader implements Runnable {
        final String topic;
        final Window window;
        final int[] seen;
        final long[] visibleAt;
        volatile boolean loopDone;
        long cpuNanos;
        int distinct;

        Reader(String topic, int count, Window window) {
            this.topic = topic;
            this.window = window;
            this.seen = new int[count];
            this.visibleAt = new long[count];
        }

        @Override
        public void run() {
            long cpuStart = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            try (KafkaConsumer<byte[], byte[]> consumer = fromBeginning(topic, "read_committed")) {
                Map<TopicPartition, Long> end = null;
                while (true) {
                    if (end == null && loopDone) {
                        // the loop committed everything: what is visible now is all there will be
                        end = consumer.endOffsets(consumer.assignment());
                    }
                    if (end != null && reached(consumer, end)) {
                        break;
                    }
                    for (ConsumerRecord<byte[], byte[]> outcome : consumer.poll(Duration.ofMillis(50))) {
                        int i = indexOf(outcome);
                        if (seen[i]++ == 0) {
                            visibleAt[i] = System.nanoTime();
                            if (++distinct == seen.length) {
                                window.last(visibleAt[i]);
                            }
                        }
                    }
                }
            }
            cpuNanos = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpuStart;
        }

        static boolean reached(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> end) {
            return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
        }
    }

    /** A consumer of every partition of the topic, from its beginning, in no group. */
    static KafkaConsumer<byte[], byte[]> fromBeginning(String topic, String isolation) {
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = partitionsOf(topic);
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        return consumer;
    }

    /** Every outcome record in the log, those of aborted transactions too (read_uncommitted). */
    static int physicalOutcomes(String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = fromBeginning(topic, "read_uncommitted")) {
            Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
            int records = 0;
            while (!Reader.reached(consumer, end)) {
                records += consumer.poll(Duration.ofMillis(100)).count();
            }
            return records;
        }
    }

    /** The measured window: from the first poll with records to the last outcome read; CPU of this process and the broker over it. */
    static final class Window {
        long startNanos;
        long lastNanos;
        long selfTicks;
        long brokerTicks;

        void start() {
            if (startNanos == 0) {
                selfTicks = -ticks("self");
                brokerTicks = -ticks(Long.toString(brokerPid));
                startNanos = System.nanoTime();
            }
        }

        void last(long nanos) {
            lastNanos = nanos;
        }

        void stop() {
            if (lastNanos == 0) {
                lastNanos = System.nanoTime(); // not every outcome was read
            }
            selfTicks += ticks("self");
            brokerTicks += ticks(Long.toString(brokerPid));
        }

        /** utime + stime of a process, in clock ticks, from /proc/PID/stat. */
        static long ticks(String pid) {
            try {
                String stat = Files.readString(Path.of("/proc", pid, "stat"));
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    record Result(Mode mode, int count, Window window, Reader reader, Loop loop, int physical) {
        double seconds() {
            return (window.lastNanos - window.startNanos) / 1e9;
        }

        double percentileMs(double p) {
            long[] latencies = IntStream.range(0, count).filter(i -> reader.visibleAt[i] != 0)
                    .mapToLong(i -> reader.visibleAt[i] - loop.takenAt[i]).sorted().toArray();
            return latencies.length == 0 ? Double.NaN : latencies[(int) Math.max(0, Math.ceil(p * latencies.length) - 1)] / 1e6;
        }

        double perRecordMs(long ticks) {
            return ticks * (TICK_NANOS / 1e6) / count;
        }

        /** A step's mean time (ms) per transaction, or per poll in a. */
        double perStep(long nanos) {
            return nanos / 1e6 / Math.max(1, loop.transactions > 0 ? loop.transactions : loop.polls);
        }

        String verdict() {
            int missing = 0;
            int duplicates = 0;
            for (int s : reader.seen) {
                missing += s == 0 ? 1 : 0;
                duplicates += Math.max(0, s - 1);
            }
            String verdict = missing == 0 && duplicates == 0 ? "exactly one each"
                    : missing + " missing, " + duplicates + " duplicates";
            return physical < 0 ? verdict : verdict + " (in the log: " + physical + " outcomes)";
        }

        String line() {
            return String.format("BENCH mode=%s records=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f bench_cpu_ms=%.4f reader_cpu_ms=%.4f broker_cpu_ms=%.4f transactions=%d handled=%d produce_ms=%.2f offsets_ms=%.2f commit_ms=%.2f read_committed=\"%s\"",
                    mode, count, seconds(), count / seconds(), percentileMs(0.5), percentileMs(0.99),
                    perRecordMs(window.selfTicks), reader.cpuNanos / 1e6 / count, perRecordMs(window.brokerTicks),
                    loop.transactions, loop.handled, perStep(loop.produceNanos), perStep(loop.offsetsNanos), perStep(loop.commitNanos),
                    verdict());
        }

        String row() {
            return String.format("| %s | %s | %,d | %,.0f | %.1f | %.1f | %.3f (%.3f) | %.3f | %,d | %s |",
                    (mode.crash() ? "crash-" : "") + mode.kind(), mode.workMs() == 0 ? "-" : String.valueOf(mode.workMs()), count,
                    count / seconds(),
                    percentileMs(0.5), percentileMs(0.99), perRecordMs(window.selfTicks), reader.cpuNanos / 1e6 / count,
                    perRecordMs(window.brokerTicks), loop.transactions, verdict());
        }
    }
}
