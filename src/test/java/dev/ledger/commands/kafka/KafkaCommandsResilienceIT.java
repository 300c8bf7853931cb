package dev.ledger.commands.kafka;

import dev.ledger.testing.KafkaBroker;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.SecondLane;
import dev.ledger.testing.TcpProxy;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payment commands over Kafka through faults, against the packaged application as separate processes
 * sharing one consumer group, and the tests' own Kafka broker: an instance SIGKILLed mid-stream (its
 * partitions move to the other; what it applied and had not committed is delivered again and replays),
 * PostgreSQL away for ten seconds, the broker itself SIGKILLed and restarted under load. After each, the
 * ledger is reconciled with every command sent: nothing lost, nothing applied twice, one account's
 * commands never reordered.
 */
@SecondLane
class KafkaCommandsResilienceIT {
    /**
     * A client of this run's own: the broker outlives a run on a developer's machine, and its topics
     * (commands, outcomes, dead letters) must not carry an earlier run's records into this one's counts.
     */
    private static final String CLIENT = "kafka-it-" + UUID.randomUUID().toString().substring(0, 8);
    private static final String TOPIC = KafkaTopics.COMMANDS_PREFIX + CLIENT;
    private static final String API_KEY = "kafka-resilience-it-key-0123456789";
    private static final Duration BOUND = Duration.ofSeconds(120);
    private static final int PARTITIONS = 4;
    /** A database of its own: this class runs beside the others (docs/testing.md, "Two lanes"). */
    private static final String DATABASE = PackagedApp.DATABASE + "_kafka_commands";
    private static TcpProxy postgres;
    private static final List<PackagedApp> apps = new ArrayList<>();
    private static KafkaProducer<byte[], byte[]> producer;
    private static KafkaBroker.Reader outcomes;
    private static KafkaBroker.Reader dead;
    private static String group;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeTrue(PackagedApp.configured(), "needs the local servers (bash .ci/services)");
        PackagedApp.recreateDatabase(DATABASE);
        String bootstrap = KafkaBroker.bootstrap();
        try (Admin admin = KafkaBroker.admin()) {
            if (admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(TOPIC)) {
                admin.deleteTopics(List.of(TOPIC)).all().get(30, TimeUnit.SECONDS);
                await().atMost(BOUND).until(() -> !admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(TOPIC));
            }
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        group = "ledger-commands-it-" + UUID.randomUUID();
        postgres = new TcpProxy(Integer.parseInt(PackagedApp.PG_HOST.split(":")[1]));
        producer = KafkaBroker.producer();
        outcomes = KafkaBroker.reader(KafkaTopics.OUTCOMES_PREFIX + CLIENT);
        dead = KafkaBroker.reader(KafkaTopics.DEAD_LETTERS);
        apps.addAll(PackagedApp.startTogether(List.of(() -> start("a", bootstrap), () -> start("b", bootstrap))));
    }

    private static PackagedApp start(String name, String bootstrap) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("LEDGER_API_KEYS", CLIENT + ":" + PackagedApp.sha256Hex(API_KEY));
        env.put("LEDGER_MESSAGING_KAFKA_ENABLED", "true");
        env.put("KAFKA_BOOTSTRAP_SERVERS", bootstrap);
        // this test's topic and group only: nothing of the other tests' clients on the shared broker
        env.put("MP_MESSAGING_INCOMING_KAFKA_COMMANDS_TOPIC", java.util.regex.Pattern.quote(TOPIC));
        env.put("MP_MESSAGING_INCOMING_KAFKA_COMMANDS_GROUP_ID", group);
        env.put("LEDGER_MESSAGING_RETRY_DELAY", "300ms");
        env.put("LEDGER_MESSAGING_KAFKA_MAX_RETRY_DELAY", "2s");
        env.put("LEDGER_MESSAGING_CONFIRM_TIMEOUT", "10s");
        // restarted by the tests: how fast a fresh start answers is PackagedApplicationIT's concern
        env.put("LEDGER_WARM_UP_ROUNDS", "0");
        // The keys the killed instance held in flight are free again about when its partitions move (after the
        // consumer session's 10 s at most, 7 to 10 s here), not 20 s later with the production lease of 30 s
        env.put("LEDGER_IDEMPOTENCY_LEASE", "10s");
        // a small pool: the machine's PostgreSQL is shared (max_connections 100)
        env.put("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", "5");
        env.putAll(PackagedApp.onDatabase(DATABASE, "127.0.0.1:" + postgres.port()));
        return PackagedApp.start(env, "kafka-commands-resilience-it-" + name + ".log");
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable closeable : new AutoCloseable[]{outcomes, dead}) {
            if (closeable != null) {
                closeable.close();
            }
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        for (PackagedApp app : apps) {
            app.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    private static String openAccount() throws Exception {
        HttpResponse<String> opened = apps.get(0).post("/accounts", API_KEY, "open-" + UUID.randomUUID(), "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        return opened.body().replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
    }

    /** {@code perAccount} credits of 1..perAccount to each of {@code accounts} new accounts, in sequence order: key -> [account, sequence]. */
    private static Map<String, String[]> credits(int accounts, int perAccount, String prefix) throws Exception {
        Map<String, String[]> commands = new TreeMap<>();
        for (int a = 0; a < accounts; a++) {
            String account = openAccount();
            for (int sequence = 1; sequence <= perAccount; sequence++) {
                commands.put(prefix + "-" + a + "-" + sequence + "-" + UUID.randomUUID(), new String[]{account, Integer.toString(sequence)});
            }
        }
        return commands;
    }

    /** Produces the commands, each account's in sequence order (one key, one partition, in order). */
    private static void produce(Map<String, String[]> commands) {
        commands.entrySet().stream()
                .sorted((x, y) -> Integer.compare(Integer.parseInt(x.getValue()[1]), Integer.parseInt(y.getValue()[1])))
                .forEach(command -> producer.send(KafkaBroker.command(CLIENT, command.getValue()[0],
                        "{\"accountId\":\"" + command.getValue()[0] + "\",\"type\":\"CREDIT\",\"amount\":7,\"sequence\":"
                                + command.getValue()[1] + "}", "idempotency-key", command.getKey())));
        producer.flush();
    }

    /** The outcomes of the commands, once every command has at least one. */
    private static List<KafkaBroker.Received> outcomesOf(Map<String, String[]> commands) {
        Set<String> keys = commands.keySet();
        await().atMost(BOUND).pollInterval(Duration.ofMillis(200)).until(() ->
                outcomes.drain(received -> keys.contains(received.header("idempotency-key")), Duration.ofMillis(200)).stream()
                        .map(received -> received.header("idempotency-key")).distinct().count() == keys.size());
        return outcomes.drain(received -> keys.contains(received.header("idempotency-key")), Duration.ZERO);
    }

    /** Reconciles the ledger with the commands; prints the counts; answers the double applications. */
    private static int reconcile(String scenario, Map<String, String[]> commands, List<KafkaBroker.Received> answers) throws Exception {
        Map<String, Integer> perAccount = new HashMap<>();
        commands.values().forEach(c -> perAccount.merge(c[0], 1, Integer::sum));
        int applied = 0;
        int doubles = 0;
        int missing = 0;
        try (Connection db = PackagedApp.database(DATABASE); Statement sql = db.createStatement()) {
            for (Map.Entry<String, Integer> account : perAccount.entrySet()) {
                try (ResultSet rows = sql.executeQuery("SELECT count(*), count(DISTINCT sequence), a.balance, a.last_sequence "
                        + "FROM accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id WHERE a.id = '" + account.getKey()
                        + "' GROUP BY a.balance, a.last_sequence")) {
                    rows.next();
                    int entries = rows.getInt(1);
                    applied += entries;
                    doubles += entries - rows.getInt(2);
                    missing += Math.max(0, account.getValue() - entries);
                    assertEquals(7L * account.getValue(), rows.getLong(3), "balance of " + account.getKey());
                    assertEquals(account.getValue().longValue(), rows.getLong(4), "last sequence of " + account.getKey());
                }
            }
        }
        Map<Integer, Long> byStatus = new TreeMap<>();
        answers.forEach(a -> byStatus.merge(a.status(), 1L, Long::sum));
        long replayed = answers.stream().filter(a -> "true".equals(a.header("idempotent-replayed"))).count();
        long deadLettered = dead.drain(letter -> CLIENT.equals(letter.header("x-ledger-client")), Duration.ofMillis(500)).size();
        System.out.printf("[%s] commands sent %d, applied %d, double applications %d, missing %d, outcomes %d by status %s,"
                        + " replayed (delivered again) %d, dead-lettered %d%n", scenario, commands.size(), applied, doubles, missing,
                answers.size(), byStatus, replayed, deadLettered);
        assertEquals(0, missing, "every command applied");
        assertEquals(0, deadLettered, "nothing dead-lettered");
        assertTrue(answers.stream().allMatch(a -> a.status() == 201), "no command refused (stale, overtaken): " + byStatus);
        return doubles;
    }

    private static Set<String> members() throws Exception {
        try (Admin admin = KafkaBroker.admin()) {
            ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(30, TimeUnit.SECONDS);
            Set<String> members = new HashSet<>();
            description.members().forEach(member -> {
                if (!member.assignment().topicPartitions().isEmpty()) {
                    members.add(member.consumerId());
                }
            });
            return members;
        }
    }

    @Test
    void aKilledInstancesPartitionsMoveAndEveryCommandIsAppliedOnce() throws Exception {
        await().atMost(BOUND).until(() -> members().size() == 2);
        Map<String, String[]> commands = credits(40, 15, "kill");
        Set<String> keys = commands.keySet();
        produce(commands);
        // mid-stream: some outcomes out, most commands still to come
        await().atMost(BOUND).pollInterval(Duration.ofMillis(50)).until(() ->
                outcomes.drain(received -> keys.contains(received.header("idempotency-key")), Duration.ofMillis(50)).size() >= 60);
        long killed = System.nanoTime();
        apps.get(1).kill();
        await().atMost(BOUND).pollInterval(Duration.ofMillis(200)).until(() -> members().size() == 1);
        long takeover = (System.nanoTime() - killed) / 1_000_000;
        List<KafkaBroker.Received> answers = outcomesOf(commands);
        System.out.printf("[kafka-sigkill] the killed instance's partitions were taken over in %d ms%n", takeover);
        assertEquals(0, reconcile("kafka-sigkill", commands, answers));
        apps.get(1).restart();
        await().atMost(BOUND).until(() -> members().size() == 2);
    }

    @Test
    void postgresAwayForTenSecondsSkipsAndDeadLettersNothing() throws Exception {
        Map<String, String[]> commands = credits(20, 3, "pgdown");
        postgres.cut();
        try {
            produce(commands);
            // ten seconds away: retried in place, nothing skipped past
            await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(15)).until(() ->
                    outcomes.drain(received -> commands.containsKey(received.header("idempotency-key")), Duration.ofMillis(100)).isEmpty());
        } finally {
            postgres.heal();
        }
        assertEquals(0, reconcile("kafka-postgres-down", commands, outcomesOf(commands)));
    }

    @Test
    void theBrokerKilledAndRestartedUnderLoadLosesAndDoublesNothing() throws Exception {
        Map<String, String[]> commands = credits(30, 6, "brokerdown");
        Set<String> keys = commands.keySet();
        produce(commands);
        await().atMost(BOUND).pollInterval(Duration.ofMillis(50)).until(() ->
                outcomes.drain(received -> keys.contains(received.header("idempotency-key")), Duration.ofMillis(50)).size() >= 20);
        KafkaBroker.kill();
        await().atMost(BOUND).until(() -> apps.get(0).status("/q/health/ready") == 503);
        KafkaBroker.start();
        await().atMost(BOUND).until(() -> apps.get(0).status("/q/health/ready") == 200);
        System.out.println("[kafka-broker-restart] readiness DOWN while the broker was away, UP again after");
        assertEquals(0, reconcile("kafka-broker-restart", commands, outcomesOf(commands)));
    }
}
