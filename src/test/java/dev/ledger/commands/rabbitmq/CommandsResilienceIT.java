package dev.ledger.commands.rabbitmq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.Broker;
import dev.ledger.testing.BrokerUsers;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.PackagedApp;
import dev.ledger.testing.RabbitMqNode;
import dev.ledger.testing.SecondLane;
import dev.ledger.testing.TcpProxy;
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
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Predicate;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payment commands through faults, against the packaged application as a separate process and a
 * RabbitMQ node of the test's own (the machine's broker is never stopped): the consumer killed
 * between the Postgres commit and the ack, the broker restarted under load, Postgres away for ten
 * seconds. After each, the ledger is reconciled with every command sent: nothing lost, nothing
 * applied twice.
 */
@SecondLane
class CommandsResilienceIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CLIENT = "it";
    private static final String API_KEY = "commands-it-key-0123456789abcdef";
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final String NODE = "ledger-commands-it@localhost";
    /** A database of its own: this class runs beside the others (docs/testing.md, "Two lanes"). */
    private static final String DATABASE = PackagedApp.DATABASE + "_commands";
    private static RabbitMqNode node;
    private static TcpProxy postgres;
    private static PackagedApp app;
    private static Broker client;
    private static Broker observer;
    private static String outcomes;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeTrue(PackagedApp.configured() && RabbitMqNode.installed(),
                "needs the local servers and RabbitMQ installed (bash .ci/services)");
        PackagedApp.recreateDatabase(DATABASE);
        node = new RabbitMqNode("ledger-commands-it", RabbitMqNode.FIRST_PORT + 3);
        BrokerUsers.ensure(CLIENT, NODE);
        postgres = new TcpProxy(Integer.parseInt(PackagedApp.PG_HOST.split(":")[1]));
        Map<String, String> env = new HashMap<>();
        env.put("LEDGER_API_KEYS", CLIENT + ":" + PackagedApp.sha256Hex(API_KEY));
        env.put("LEDGER_MESSAGING_RABBITMQ_ENABLED", "true");
        env.put("LEDGER_MESSAGING_RETRY_DELAY", "300ms");
        env.put("LEDGER_MESSAGING_RABBITMQ_PAUSE", "2s");
        env.put("LEDGER_MESSAGING_CONFIRM_TIMEOUT", "5s");
        env.put("RABBITMQ_HOST", "127.0.0.1");
        env.put("RABBITMQ_PORT", Integer.toString(node.port()));
        env.put("RABBITMQ_USERNAME", "guest");
        env.put("RABBITMQ_PASSWORD", "guest");
        env.put("RABBITMQ_VIRTUAL_HOST", "/");
        // a small pool: the machine's PostgreSQL is shared (max_connections 100)
        env.put("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", "5");
        env.putAll(PackagedApp.onDatabase(DATABASE, "127.0.0.1:" + postgres.port()));
        app = PackagedApp.start(env, "commands-resilience-it.log");
        client = Broker.as(CLIENT, BrokerUsers.PASSWORD, node.port());
        observer = Broker.as("guest", "guest", node.port());
        outcomes = observer.outcomeQueue();
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable closeable : new AutoCloseable[]{client, observer}) {
            if (closeable != null) {
                try {
                    closeable.close();
                } catch (Exception ignored) {
                    // the node may be gone
                }
            }
        }
        if (app != null) {
            app.close();
        }
        if (node != null) {
            node.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    private static String openAccount() throws Exception {
        HttpResponse<String> opened = app.post("/accounts", API_KEY, "open-" + UUID.randomUUID(), "{\"currency\":\"EUR\"}");
        assertEquals(201, opened.statusCode(), opened.body());
        return JSON.readTree(opened.body()).get("id").asText();
    }

    /**
     * One credit per account, each its own key: commands of one account may run in any order and the
     * sequence rule would refuse some as stale, so each command gets an account of its own and the
     * reconciliation is exact. Answers key -> [account, amount].
     */
    private static Map<String, String[]> credits(int count, String prefix) throws Exception {
        Map<String, String[]> commands = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            commands.put(prefix + "-" + i + "-" + UUID.randomUUID(), new String[]{openAccount(), Integer.toString(10 + i)});
        }
        return commands;
    }

    private static void publish(Broker broker, Map<String, String[]> commands) throws Exception {
        for (Map.Entry<String, String[]> command : commands.entrySet()) {
            String[] c = command.getValue();
            broker.publish(Broker.command(command.getKey(), CLIENT, null).build(), "{\"accountId\":\"" + c[0]
                    + "\",\"type\":\"CREDIT\",\"amount\":" + c[1] + ",\"sequence\":1}");
        }
    }

    /** The ledger entries of the commands' accounts, counted in Postgres: account -> [entries, sum of amounts]. */
    private static Map<String, long[]> ledger(Map<String, String[]> commands) throws Exception {
        Map<String, long[]> byAccount = new HashMap<>();
        try (Connection db = PackagedApp.database(DATABASE); Statement sql = db.createStatement();
             ResultSet rows = sql.executeQuery("SELECT account_id, count(*), sum(amount) FROM ledger_entries GROUP BY account_id")) {
            while (rows.next()) {
                byAccount.put(rows.getString(1), new long[]{rows.getLong(2), rows.getLong(3)});
            }
        }
        return byAccount;
    }

    /** How many of the commands are applied. */
    private static long applied(Map<String, String[]> commands) throws Exception {
        Map<String, long[]> ledger = ledger(commands);
        return commands.values().stream().filter(c -> ledger.containsKey(c[0])).count();
    }

    /** Applications beyond the first, over the commands' accounts; every command must be applied with its amount. */
    private static int doubleApplications(Map<String, String[]> commands) throws Exception {
        Map<String, long[]> ledger = ledger(commands);
        int doubles = 0;
        for (String[] command : commands.values()) {
            long[] entries = ledger.get(command[0]);
            assertTrue(entries != null, "command for " + command[0] + " applied");
            doubles += (int) (entries[0] - 1);
            assertEquals(Long.parseLong(command[1]) * entries[0], entries[1], "amount of " + command[0]);
        }
        return doubles;
    }

    /** Outcomes until one per key has arrived; answers them by key, in the order they came. */
    private static Map<String, List<Broker.Delivery>> outcomesFor(Map<String, String[]> commands) throws Exception {
        return outcomesFor(commands, outcomes -> true);
    }

    /** Outcomes until every key's outcomes so far are {@code enough}; answers them by key, in the order they came. */
    private static Map<String, List<Broker.Delivery>> outcomesFor(Map<String, String[]> commands,
                                                                 Predicate<List<Broker.Delivery>> enough) throws Exception {
        Map<String, List<Broker.Delivery>> byKey = new HashMap<>();
        await().atMost(BOUND).pollInterval(Duration.ofMillis(100)).until(() -> {
            for (Broker.Delivery delivery : observer.drain(outcomes)) {
                byKey.computeIfAbsent((String) delivery.header("idempotency-key"), k -> new ArrayList<>()).add(delivery);
            }
            return commands.keySet().stream().allMatch(key -> byKey.containsKey(key) && enough.test(byKey.get(key)));
        });
        return byKey;
    }

    @Test
    void aConsumerKilledBetweenCommitAndAckReplaysAndAppliesNothingTwice() throws Exception {
        Map<String, String[]> commands = credits(40, "crash");
        app.kill();
        publish(client, commands);
        // The broker blocks every publisher: the consumer commits each command but cannot publish its
        // outcome, so it acknowledges none of them.
        BrokerUsers.ctl(NODE, "set_vm_memory_high_watermark", "0.0000001");
        try {
            app.restart();
            await().atMost(BOUND).until(() -> applied(commands) == commands.size());
            // an outcome the broker never confirms does not hold its command for ever: after
            // ledger.messaging.confirm-timeout (5 s here) the command is given back and redelivered
            await().atMost(BOUND).until(() -> redelivered() >= commands.size());
            assertTrue(observer.drain(outcomes).isEmpty(), "no outcome published, so none acknowledged");
            assertTrue(unsettled(Broker.COMMANDS) >= commands.size(), "none acknowledged");
            app.kill();
        } finally {
            BrokerUsers.ctl(NODE, "set_vm_memory_high_watermark", "0.4");
        }
        app.restart();
        // Outcomes the killed instances published while the broker blocked them may still arrive (the
        // broker reads what their connections had sent once the alarm clears): outcomes are at least
        // once. What counts is that every command's redelivery replays, and every copy is the same answer.
        Map<String, List<Broker.Delivery>> answers = outcomesFor(commands,
                outcomes -> outcomes.stream().anyMatch(Broker.Delivery::replayed));
        long replays = answers.values().stream().flatMap(List::stream).filter(Broker.Delivery::replayed).count();
        long keysReplayed = answers.values().stream().filter(outcomes -> outcomes.stream().anyMatch(Broker.Delivery::replayed)).count();
        int doubles = doubleApplications(commands);
        System.out.printf("Commands crash: %d commands, consumer killed with all committed and none acknowledged, "
                        + "%d outcomes after the restart (%d replays), applied %d, double applications %d%n",
                commands.size(), answers.values().stream().mapToInt(List::size).sum(), replays, applied(commands), doubles);
        assertEquals(0, doubles);
        assertEquals(commands.size(), keysReplayed, "every redelivered command replayed its recorded outcome");
        for (List<Broker.Delivery> copies : answers.values()) {
            assertEquals(1, copies.stream().map(Broker.Delivery::body).distinct().count(), "every copy of an outcome is the same answer");
        }
        await().atMost(BOUND).until(() -> observer.depth("ledger.commands") == 0);
    }

    @Test
    void theBrokerRestartedUnderLoadLosesAndDoublesNothing() throws Exception {
        Map<String, String[]> commands = credits(200, "restart");
        // PostgreSQL slowed (every chunk held back 50 ms): the commands take seconds to apply, so the broker goes with
        // some applied, some in the consumer's hands and the rest queued (at full speed all 200 were applied before
        // rabbitmqctl had stopped it)
        long appliedWhileDown;
        postgres.delay(50);
        try {
            publish(client, commands);
            await().atMost(BOUND).pollInterval(Duration.ofMillis(20)).until(() -> applied(commands) > 0);
            node.stop();
            await().atMost(BOUND).until(() -> app.status("/q/health/ready") == 503);
            appliedWhileDown = applied(commands);
        } finally {
            postgres.heal();
        }
        assertTrue(appliedWhileDown < commands.size(), "the broker went under load: " + appliedWhileDown + " of "
                + commands.size() + " applied by then");
        node.start();
        // the consumer and the publishers reconnect by themselves
        await().atMost(BOUND).until(() -> app.status("/q/health/ready") == 200);
        await().atMost(BOUND).until(() -> applied(commands) == commands.size());
        reconnectObserver();
        await().atMost(BOUND).until(() -> observer.depth("ledger.commands") == 0);
        int doubles = doubleApplications(commands);
        System.out.printf("Broker restart under load: %d commands, %d applied when the broker went, readiness DOWN then UP, "
                + "applied %d, double applications %d%n", commands.size(), appliedWhileDown, applied(commands), doubles);
        assertEquals(0, doubles);
    }

    /** Commands this run of the service gave back to the broker ({@code ledger_commands_total{outcome="redelivered"}}). */
    private static long redelivered() throws Exception {
        return (long) Metrics.value(app.get("/q/metrics", null).body(),
                "ledger_commands_total{outcome=\"redelivered\",problem=\"none\",transport=\"rabbitmq\"}").orElse(0);
    }

    /** Messages of {@code queue} ready or delivered and not yet acknowledged, as the broker counts them. */
    private static long unsettled(String queue) throws Exception {
        for (String line : BrokerUsers.ctl(NODE, "list_queues", "-p", "/", "name", "messages").split("\n")) {
            String[] columns = line.trim().split("\\s+");
            if (columns.length == 2 && columns[0].equals(queue)) {
                return Long.parseLong(columns[1]);
            }
        }
        throw new IllegalStateException("no queue " + queue);
    }

    private static void reconnectObserver() throws Exception {
        try {
            client.close();
            observer.close();
        } catch (Exception gone) {
            // closed by the restart
        }
        client = Broker.as(CLIENT, BrokerUsers.PASSWORD, node.port());
        observer = Broker.as("guest", "guest", node.port());
        outcomes = observer.outcomeQueue();
    }

    @Test
    void commandsWaitForPostgresAndApplyOnceWhenItReturns() throws Exception {
        Map<String, String[]> commands = credits(30, "pgdown");
        postgres.cut();
        try {
            publish(client, commands);
            // ten seconds away: nothing is applied, nothing dead-lettered, and consumption pauses
            await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(15))
                    .until(() -> observer.depth("ledger.commands.dead") == 0);
            assertTrue(app.get("/q/metrics", null).body().matches("(?s).*\nledger_commands_pauses_total [1-9].*"),
                    "consumption paused");
        } finally {
            postgres.heal();
        }
        await().atMost(BOUND).until(() -> applied(commands) == commands.size());
        Map<String, List<Broker.Delivery>> answers = outcomesFor(commands);
        int doubles = doubleApplications(commands);
        System.out.printf("Postgres down 10 s: %d commands, %d dead-lettered, applied %d, %d outcomes, double applications %d%n",
                commands.size(), observer.depth("ledger.commands.dead"), applied(commands), answers.size(), doubles);
        assertEquals(0, doubles);
        assertEquals(0, observer.depth("ledger.commands.dead"));
        for (List<Broker.Delivery> answer : answers.values()) {
            assertEquals(201, answer.get(0).status());
        }
    }

    static JsonNode json(String body) throws Exception {
        return JSON.readTree(body);
    }
}
