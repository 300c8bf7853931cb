package dev.ledger.shard;

import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.ExpiredRecordPurge;
import dev.ledger.outbox.EventTap;
import dev.ledger.outbox.PublishedEventPurge;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.Broker;
import dev.ledger.testing.BrokerUsers;
import dev.ledger.testing.KafkaBroker;
import dev.ledger.testing.Metrics;
import dev.ledger.testing.Sql;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static dev.ledger.testing.ApiClient.DEV;
import static dev.ledger.testing.ApiClient.OTHER;
import static dev.ledger.testing.ApiClient.newKey;
import static dev.ledger.testing.LedgerApi.transaction;
import static dev.ledger.testing.LedgerApi.transferBody;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two clients on two PostgreSQL primaries: {@code other} on the default shard (the tests' database), {@code dev} on
 * the shard {@code two} ({@link ShardTwo}). Each client's account, payment, transfer, replay and key lookup land on its
 * own database and nowhere else, over HTTP and over RabbitMQ; each shard's events are published by its own relay, once
 * and in order, and its holds released by the expiry job on it; with the shard {@code two} stopped, and then frozen,
 * its client alone is answered 503 (frozen: within the statement's bound), and the other client's RabbitMQ and Kafka
 * commands do not wait for it (stopped, then frozen), the down shard's own applied once it is back; each shard's
 * statements and purges are counted under its name in /q/metrics.
 */
@QuarkusTest
@TestProfile(ShardsProfile.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShardsTest {
    @Inject
    ExpiredRecordPurge recordPurge;

    @Inject
    PublishedEventPurge eventPurge;

    @Inject
    LedgerConfig config;

    @Test
    @Order(1)
    void eachClientsRequestsLandOnItsOwnShard() throws Exception {
        for (ApiClient client : new ApiClient[] {OTHER, DEV}) {
            String payer = client.newAccount();
            String payee = client.newAccount();
            client.credit(payer, 1000, 1);

            String debitKey = newKey();
            Response debit = client.postTransaction(payer, debitKey, transaction("DEBIT", 100, 2));
            assertEquals(201, debit.statusCode(), debit.asString());
            Response replay = client.postTransaction(payer, debitKey, transaction("DEBIT", 100, 2));
            assertEquals(201, replay.statusCode(), replay.asString());
            assertEquals("true", replay.header("Idempotent-Replayed"));
            assertEquals(debit.asString(), replay.asString());

            Response transfer = client.transfer(transferBody(payer, payee, 250, ""));
            assertEquals(201, transfer.statusCode(), transfer.asString());
            String transferId = transfer.path("id");

            Response lookup = client.lookup(debitKey);
            assertEquals(200, lookup.statusCode(), lookup.asString());
            assertEquals(debit.header("Location"), lookup.path("location"));

            assertEquals(650, client.balance(payer));
            assertEquals(250, client.balance(payee));
            assertEquals(3, client.entryCount(payer));
            String entryId = debit.path("id");
            assertEquals(200, client.transaction(payer, entryId).statusCode());
            assertEquals(200, client.getTransfer(transferId).statusCode());

            String here = client == OTHER ? "default" : "two";
            String there = client == OTHER ? "two" : "default";
            for (String account : new String[] {payer, payee}) {
                assertEquals(1, count(here, "SELECT count(*) FROM accounts WHERE id = ?", account), account + " on " + here);
                assertEquals(0, count(there, "SELECT count(*) FROM accounts WHERE id = ?", account), account + " not on " + there);
            }
            assertEquals(1, count(here, "SELECT count(*) FROM ledger_entries WHERE id = ?", entryId));
            assertEquals(0, count(there, "SELECT count(*) FROM ledger_entries WHERE id = ?", entryId));
            assertEquals(1, count(here, "SELECT count(*) FROM transfers WHERE id = ?", transferId));
            assertEquals(0, count(there, "SELECT count(*) FROM transfers WHERE id = ?", transferId));
            // the two opens, the debit and the transfer: each key recorded once, on the client's shard alone
            String[] created = {payer, payee, entryId, transferId};
            assertEquals(4, countRecords(here, client.id(), created), client.id() + "'s records on " + here);
            assertEquals(0, countRecords(there, client.id(), created), client.id() + "'s records not on " + there);
        }
        assertEquals(404, DEV.account(OTHER.newAccount()).statusCode(), "another client's account does not exist");
    }

    @Test
    @Order(2)
    void eachClientsCommandsLandOnItsOwnShard() throws Exception {
        for (ApiClient client : new ApiClient[] {OTHER, DEV}) {
            String account = client.newAccount();
            BrokerUsers.ensure(client.id());
            try (Broker broker = Broker.as(client.id(), BrokerUsers.PASSWORD, 0)) {
                String replies = broker.replyQueue();
                broker.publish(Broker.command(newKey(), client.id(), replies).build(),
                        "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":70,\"sequence\":1}");
                Broker.Delivery reply = broker.next(replies, Duration.ofSeconds(20));
                assertEquals(201, reply.status(), reply.body());
            }
            assertEquals(70, client.balance(account));
            String here = client == OTHER ? "default" : "two";
            String there = client == OTHER ? "two" : "default";
            assertEquals(1, count(here, "SELECT count(*) FROM ledger_entries WHERE account_id = ?", account), account + " on " + here);
            assertEquals(0, count(there, "SELECT count(*) FROM ledger_entries WHERE account_id = ?", account), account + " not on " + there);
        }
    }

    @Test
    @Order(3)
    void eachShardsEventsArePublishedOnceAndInOrderFromItsOwnOutbox() throws Exception {
        try (EventTap tap = EventTap.onSharedBroker()) {
            for (ApiClient client : new ApiClient[] {OTHER, DEV}) {
                String account = client.newAccount();
                Response first = client.credit(account, 100, 1);
                Response second = client.credit(account, 200, 2);
                assertEquals(201, second.statusCode(), second.asString());

                await().atMost(Duration.ofSeconds(30)).until(() -> tap.of(List.of(account)).size() >= 3);
                tap.drain(Duration.ofSeconds(10)); // whatever else the relays sent has arrived: a duplicate would show
                List<EventTap.Delivery> events = tap.of(List.of(account));
                assertEquals(List.of("account.opened", "transaction.applied", "transaction.applied"),
                        events.stream().map(EventTap.Delivery::type).toList(), client.id() + "'s events, once each, in order");
                assertEquals(first.path("id").toString(), events.get(1).resourceId());
                assertEquals(second.path("id").toString(), events.get(2).resourceId());
                assertEquals(3, events.stream().map(EventTap.Delivery::eventId).distinct().count());
                for (EventTap.Delivery event : events) {
                    assertEquals(client.id(), event.body().path("client").asText());
                    assertFalse(event.redelivered());
                }

                String here = client == OTHER ? "default" : "two";
                String there = client == OTHER ? "two" : "default";
                assertEquals(3, count(here, "SELECT count(*) FROM outbox_events WHERE account_id = ?", account), "written on " + here);
                assertEquals(0, count(there, "SELECT count(*) FROM outbox_events WHERE account_id = ?", account), "not on " + there);
                assertEquals(0, count(here, "SELECT count(*) FROM outbox_deliveries d JOIN outbox_events o ON o.position = d.position "
                        + "WHERE o.account_id = ?", account), "every delivery marked on " + here);
            }
        }
    }

    @Test
    @Order(4)
    void aHoldOnShardTwoIsReleasedByTheExpiryJobThere() throws Exception {
        try (EventTap tap = EventTap.onSharedBroker()) {
            String payer = DEV.newAccount();
            DEV.credit(payer, 1000, 1);
            String payee = DEV.newAccount();
            double releasedBefore = releasedOnShardTwo();
            Response hold = DEV.transfer(transferBody(payer, payee, 600, "\"pending\":true,\"timeoutSeconds\":1"));
            assertEquals(201, hold.statusCode(), hold.asString());
            String id = hold.path("id");

            // nobody asks for the hold: the expiry job on shard two releases it and wakes that shard's relay
            await().atMost(Duration.ofSeconds(30)).until(() -> tap.of(List.of(payer)).size() >= 4);
            await().atMost(Duration.ofSeconds(10)).until(() -> tap.of(List.of(payee)).size() >= 3);
            assertEquals(List.of("account.opened", "transaction.applied", "transfer.pending", "transfer.expired"),
                    tap.of(List.of(payer)).stream().map(EventTap.Delivery::type).toList());
            assertEquals(List.of("account.opened", "transfer.pending", "transfer.expired"),
                    tap.of(List.of(payee)).stream().map(EventTap.Delivery::type).toList());
            assertEquals("expired", transferStatus(id), "released in shard two's database");
            assertEquals(0, count("default", "SELECT count(*) FROM transfers WHERE id = ?", id));
            assertTrue(releasedOnShardTwo() >= releasedBefore + 1, "counted as released on shard two");
        }
    }

    @Test
    @Order(5)
    void aShardDownAnswers503ToItsOwnClientsAlone() throws Exception {
        String otherAccount = OTHER.newAccount();
        String devAccount = DEV.newAccount();
        List<String> devAccounts = new ArrayList<>();
        List<String> otherAccounts = new ArrayList<>();
        for (int i = 0; i < COMMANDS; i++) {
            devAccounts.add(DEV.newAccount());
            otherAccounts.add(OTHER.newAccount());
        }
        BrokerUsers.ensure(OTHER.id());
        BrokerUsers.ensure(DEV.id());
        Broker devBroker = Broker.as(DEV.id(), BrokerUsers.PASSWORD, 0);
        Broker otherBroker = Broker.as(OTHER.id(), BrokerUsers.PASSWORD, 0);
        String devReplies = devBroker.replyQueue();
        String otherReplies = otherBroker.replyQueue();
        ShardTwo.server().crash();
        try {
            Response refused = DEV.openAccount(newKey(), "EUR");
            assertEquals(503, refused.statusCode(), refused.asString());
            assertEquals("/problems/service-unavailable", refused.path("type"));
            assertNotNull(refused.header("Retry-After"));
            Response payment = DEV.postTransaction(devAccount, newKey(), transaction("CREDIT", 10, 1));
            assertEquals(503, payment.statusCode(), payment.asString());
            assertNotNull(payment.header("Retry-After"));
            assertEquals(503, DEV.account(devAccount).statusCode());

            Response served = OTHER.postTransaction(otherAccount, newKey(), transaction("CREDIT", 10, 1));
            assertEquals(201, served.statusCode(), served.asString());
            assertEquals(201, OTHER.openAccount(newKey(), "EUR").statusCode());

            Response ready = RestAssured.given().when().get("/q/health/ready").andReturn();
            assertEquals(200, ready.statusCode(), ready.asString());
            assertEquals("UP", ready.path("checks.find { it.name == 'PostgreSQL' }.data.postgresql"));
            String two = ready.path("checks.find { it.name == 'PostgreSQL' }.data.'shard two'");
            assertEquals("DOWN", two.substring(0, 4), ready.asString());

            // RabbitMQ's one queue: the down shard's commands wait (retried after their back-off), the default
            // shard's are applied meanwhile, and the queue never pauses for one shard's outage
            double pausesBefore = pauses();
            double redeliveredBefore = redelivered();
            for (String account : devAccounts) {
                devBroker.publish(Broker.command(newKey(), DEV.id(), devReplies).build(), credit(account));
            }
            // each of them met its shard down and was given back to the broker, at least twice: its breaker opened
            await().atMost(Duration.ofSeconds(30)).until(() -> redelivered() - redeliveredBefore >= 2 * devAccounts.size());
            for (String account : otherAccounts) {
                otherBroker.publish(Broker.command(newKey(), OTHER.id(), otherReplies).build(), credit(account));
            }
            for (int i = 0; i < otherAccounts.size(); i++) {
                Broker.Delivery outcome = otherBroker.next(otherReplies, Duration.ofSeconds(20));
                assertEquals(201, outcome.status(), outcome.body());
            }
            assertEquals(pausesBefore, pauses(), "the queue paused for one shard's outage");
            assertEquals(0, devBroker.depth(devReplies), "no outcome for the down shard's commands yet");
            System.out.printf("[shards] shard two down: %d commands of its client retried, %d of the default shard's "
                    + "applied meanwhile, pauses of the queue %.0f%n", devAccounts.size(), otherAccounts.size(), pauses() - pausesBefore);
        } finally {
            ShardTwo.server().start();
        }
        for (String ignored : devAccounts) {
            Broker.Delivery outcome = devBroker.next(devReplies, Duration.ofSeconds(60));
            assertEquals(201, outcome.status(), outcome.body());
        }
        for (String account : devAccounts) {
            assertEquals(5, DEV.balance(account), account);
        }
        devBroker.close();
        otherBroker.close();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertEquals(201, DEV.postTransaction(devAccount, newKey(), transaction("CREDIT", 10, 1)).statusCode()));
        Response ready = RestAssured.given().when().get("/q/health/ready").andReturn();
        assertEquals("UP", ready.path("checks.find { it.name == 'PostgreSQL' }.data.'shard two'"), ready.asString());
    }

    @Test
    @Order(6)
    void eachClientsStatementsAreCountedUnderItsShard() {
        for (ApiClient client : new ApiClient[] {OTHER, DEV}) {
            String account = client.newAccount();
            String here = client == OTHER ? "default" : "two";
            String there = client == OTHER ? "two" : "default";
            double hereBefore = statements(here);
            double thereBefore = statements(there);
            for (int sequence = 1; sequence <= PAYMENTS; sequence++) {
                client.credit(account, 1, sequence); // one statement each, on the client's shard
            }
            double counted = statements(here) - hereBefore;
            double elsewhere = statements(there) - thereBefore;
            System.out.printf("[shards] %d payments of %s: statements counted under shard=\"%s\" %.0f, under shard=\"%s\" %.0f%n",
                    PAYMENTS, client.id(), here, counted, there, elsewhere);
            // besides them only the background jobs' few statements (the expiry job's, each second), on either shard
            assertTrue(counted >= PAYMENTS, client.id() + "'s statements under shard=" + here + ": " + counted);
            assertTrue(elsewhere < PAYMENTS, client.id() + "'s statements not under shard=" + there + ": " + elsewhere);
        }
        assertNotEquals(OptionalDouble.empty(), Metrics.value(metrics(),
                "ledger_dependency_calls_seconds_count{call=\"statement\",dependency=\"postgres\",result=\"failed\",shard=\"two\"}"),
                "each shard's failures exposed too");
    }

    @Test
    @Order(7)
    void eachShardsPurgesAreCountedUnderItsName() throws Exception {
        double recordsBefore = Metrics.value(metrics(), "ledger_idempotency_records_purged_total{shard=\"two\"}").orElseThrow();
        double eventsBefore = Metrics.value(metrics(), "ledger_events_purged_total{shard=\"two\"}").orElseThrow();
        assertTrue(Metrics.value(metrics(), "ledger_idempotency_records_purged_total{shard=\"default\"}").isPresent());
        assertTrue(Metrics.value(metrics(), "ledger_events_purged_total{shard=\"default\"}").isPresent());
        String client = "purged-" + UUID.randomUUID();
        try (Connection db = ShardTwo.connect(); Statement sql = db.createStatement()) {
            sql.execute("INSERT INTO idempotency_records (client, key_hash, fingerprint, outcome, expires_at) SELECT '" + client
                    + "', sha256(('" + client + "' || g)::bytea), '\\x00', 'ACCOUNT_NOT_FOUND', now() - interval '1 hour' "
                    + "FROM generate_series(1, 7) g");
            sql.execute("INSERT INTO outbox_events (type, account_id, created_at, published_at) SELECT 'account.opened', '"
                    + UUID.randomUUID() + "', now() - interval '30 days', now() - interval '8 days' FROM generate_series(1, 5)");
        }
        // shard two holds no other expired record or old event: whichever run removes them (this one or the scheduled one)
        recordPurge.purge(1000, 10).await().atMost(Duration.ofSeconds(30));
        eventPurge.purge(1000, 10, Duration.ofDays(7)).await().atMost(Duration.ofSeconds(30));
        double records = Metrics.value(metrics(), "ledger_idempotency_records_purged_total{shard=\"two\"}").orElseThrow() - recordsBefore;
        double events = Metrics.value(metrics(), "ledger_events_purged_total{shard=\"two\"}").orElseThrow() - eventsBefore;
        System.out.printf("[shards] purged on shard two: %.0f records (7 of this test's), %.0f events (5 of this test's)%n",
                records, events);
        // at least this test's: the sharded run's classes (same profile) may leave expired records of dev's there too
        assertTrue(records >= 7, records + " records");
        assertTrue(events >= 5, events + " events");
        try (Connection db = ShardTwo.connect(); Statement sql = db.createStatement();
             java.sql.ResultSet left = sql.executeQuery("SELECT count(*) FROM idempotency_records WHERE client = '" + client + "'")) {
            left.next();
            assertEquals(0, left.getLong(1), "this test's expired records purged");
        }
    }

    @Test
    @Order(9)
    void aShardDownHoldsUpNoOtherClientsKafkaCommands() throws Exception {
        ApiClient stopped = DEV; // on shard two
        ApiClient served = OTHER; // on the default shard
        // more of the stopped shard's commands than its budget and one poll can hold, the same number on each of budget
        // accounts (each a lane of its own): so that the test shows the shard holding no more than that
        int budget = config.messaging().kafka().maxHeld();
        int poll = ConfigProvider.getConfig().getValue("mp.messaging.incoming.kafka-commands.max.poll.records", Integer.class);
        int perAccount = (budget + poll) / budget + 1;
        List<String> stoppedAccounts = new ArrayList<>();
        for (int i = 0; i < budget; i++) {
            stoppedAccounts.add(stopped.newAccount());
        }
        List<String> servedAccounts = new ArrayList<>();
        for (int i = 0; i < KAFKA_SERVED_COMMANDS; i++) {
            servedAccounts.add(served.newAccount());
        }
        try (KafkaProducer<byte[], byte[]> producer = KafkaBroker.producer();
             KafkaBroker.Reader stoppedOutcomes = KafkaBroker.reader("ledger.outcomes." + stopped.id());
             KafkaBroker.Reader servedOutcomes = KafkaBroker.reader("ledger.outcomes." + served.id())) {
            // each client's topic exists and each of its partitions has been read before the outage: no rebalance, and no
            // first record of a partition (whose committed offset the connector looks up first), happens within it
            warmUp(producer, stopped, stoppedOutcomes);
            warmUp(producer, served, servedOutcomes);

            List<String> stoppedKeys = new ArrayList<>();
            List<String> servedKeys = new ArrayList<>();
            double retriedBefore = kafkaRetried();
            ShardTwo.server().crash();
            try {
                for (int sequence = 1; sequence <= perAccount; sequence++) {
                    for (String account : stoppedAccounts) {
                        String key = newKey();
                        stoppedKeys.add(key);
                        producer.send(KafkaBroker.command(stopped.id(), account, credit(account, sequence), "idempotency-key", key));
                    }
                }
                producer.flush();
                // the stopped shard's commands are retried in place, and a budget is full: partitions paused
                await().atMost(Duration.ofSeconds(60)).until(() -> kafkaRetried() - retriedBefore >= budget);
                await().atMost(Duration.ofSeconds(30)).until(() -> pausedPartitions("two") + pausedPartitions("default") > 0);

                long servedSentAt = System.nanoTime();
                for (String account : servedAccounts) {
                    String key = newKey();
                    servedKeys.add(key);
                    producer.send(KafkaBroker.command(served.id(), account, credit(account, 1), "idempotency-key", key));
                }
                producer.flush();
                List<KafkaBroker.Received> servedAnswers = arrived(servedOutcomes, servedKeys, Duration.ofSeconds(30));
                long waited = System.nanoTime() - servedSentAt;
                Map<Integer, Long> servedStatuses = byStatus(servedAnswers);
                List<KafkaBroker.Received> early = stoppedOutcomes.drain(keyed(stoppedKeys), Duration.ofSeconds(1));
                double held = kafkaGauge("ledger_commands_held", "two");
                System.out.printf("[shards-kafka] shard two down: %d commands of its client sent, %.0f held (budget %d a shard, and one "
                                + "poll), retried in place %.0f times, partitions paused: shard two %.0f, default %.0f; %d of the default "
                                + "shard's client sent, outcomes %s within %d ms of the first; %d outcomes of the stopped shard's%n",
                        stoppedKeys.size(), held, budget, kafkaRetried() - retriedBefore, pausedPartitions("two"),
                        pausedPartitions("default"), servedKeys.size(), servedStatuses, waited / 1_000_000, early.size());
                assertEquals(Map.of(201, (long) servedKeys.size()), servedStatuses, "every command of the default shard applied meanwhile");
                assertEquals(0, early.size(), "no outcome for the stopped shard's commands yet: " + early);
                assertEquals(0, pausedPartitions("default"), "no partition of the default shard's clients paused");
                assertTrue(pausedPartitions("two") > 0, "the stopped shard's clients' partitions paused");
                assertTrue(held >= budget && held <= budget + poll && held < stoppedKeys.size(),
                        "the stopped shard holds its budget and at most one poll (" + poll + ") more: " + held);
            } finally {
                ShardTwo.server().start();
            }

            List<KafkaBroker.Received> stoppedAnswers = arrived(stoppedOutcomes, stoppedKeys, Duration.ofSeconds(120));
            long applied = 0;
            long wrong = 0;
            for (String account : stoppedAccounts) {
                applied += stopped.entryCount(account);
                wrong += stopped.balance(account) == 5L * perAccount ? 0 : 1;
            }
            for (String account : servedAccounts) {
                applied += served.entryCount(account);
            }
            Map<Integer, Long> stoppedStatuses = byStatus(stoppedAnswers);
            System.out.printf("[shards-kafka] shard two back: sent %d, applied %d, double applications %d, accounts with a wrong "
                    + "balance %d, outcomes of its client's commands %s, partitions paused %.0f%n", stoppedKeys.size() + servedKeys.size(),
                    applied, applied - stoppedKeys.size() - servedKeys.size(), wrong, stoppedStatuses, pausedPartitions("two"));
            assertEquals(Map.of(201, (long) stoppedKeys.size()), stoppedStatuses, "every command of the stopped shard applied once it is back");
            assertEquals(stoppedKeys.size() + servedKeys.size(), applied, "each command applied once");
            assertEquals(0, wrong, "each account's " + perAccount + " credits applied in their order");
            await().atMost(Duration.ofSeconds(10)).until(() -> pausedPartitions("two") == 0);
        }
    }

    /**
     * After {@link #aShardDownHoldsUpNoOtherClientsKafkaCommands}, whose warm-up read every partition of both clients'
     * command topics: no rebalance and no first record of a partition happens while the shard is frozen.
     */
    @Test
    @Order(10)
    void aFrozenShardAnswers503ToItsOwnClientsAloneWithinTheBound() throws Exception {
        String devAccount = DEV.newAccount();
        List<String> otherAccounts = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            otherAccounts.add(OTHER.newAccount());
        }
        // commands of both clients through both brokers, one account each
        Map<ApiClient, List<String>> rabbitAccounts = new HashMap<>();
        Map<ApiClient, List<String>> kafkaAccounts = new HashMap<>();
        for (ApiClient client : new ApiClient[] {DEV, OTHER}) {
            BrokerUsers.ensure(client.id());
            rabbitAccounts.put(client, new ArrayList<>());
            kafkaAccounts.put(client, new ArrayList<>());
            for (int i = 0; i < FROZEN_COMMANDS; i++) {
                rabbitAccounts.get(client).add(client.newAccount());
            }
            // the frozen shard's more than its Kafka budget holds, so that its clients' partitions are paused
            for (int i = 0; i < (client == DEV ? config.messaging().kafka().maxHeld() + FROZEN_COMMANDS : FROZEN_COMMANDS); i++) {
                kafkaAccounts.get(client).add(client.newAccount());
            }
        }
        String devKey = newKey();
        Map<Integer, Integer> otherAnswers = new TreeMap<>();
        Map<String, Map<Integer, Long>> otherOutcomes = new TreeMap<>();
        List<String> devKafkaKeys = new ArrayList<>();
        long waitedMillis;
        long otherCommandsMillis;
        try (Broker devBroker = Broker.as(DEV.id(), BrokerUsers.PASSWORD, 0);
             Broker otherBroker = Broker.as(OTHER.id(), BrokerUsers.PASSWORD, 0);
             KafkaProducer<byte[], byte[]> producer = KafkaBroker.producer();
             KafkaBroker.Reader devKafka = KafkaBroker.reader("ledger.outcomes." + DEV.id());
             KafkaBroker.Reader otherKafka = KafkaBroker.reader("ledger.outcomes." + OTHER.id())) {
            String devReplies = devBroker.replyQueue();
            String otherReplies = otherBroker.replyQueue();
            ShardTwo.server().freeze(); // connections open, nothing answers: a primary that hangs
            try {
                long started = System.nanoTime();
                Response frozen = DEV.postTransaction(devAccount, devKey, transaction("CREDIT", 10, 1));
                waitedMillis = (System.nanoTime() - started) / 1_000_000;
                assertEquals(503, frozen.statusCode(), frozen.asString());
                assertNotNull(frozen.header("Retry-After"));
                // the frozen shard's commands first: they meet it hanging and hold their lanes for a statement's bound
                devKafkaKeys.addAll(sendCredits(DEV, devBroker, devReplies, producer, rabbitAccounts.get(DEV), kafkaAccounts.get(DEV)));
                // its budget full: its clients' partitions paused (and, were the budget one for every shard, everyone's)
                await().atMost(Duration.ofSeconds(30)).until(() -> pausedPartitions("two") + pausedPartitions("default") > 0);

                for (int i = 0; i < FROZEN_PAYMENTS; i++) {
                    Response served = OTHER.postTransaction(otherAccounts.get(i % otherAccounts.size()), newKey(),
                            transaction("CREDIT", 1, 1 + i / otherAccounts.size()));
                    otherAnswers.merge(served.statusCode(), 1, Integer::sum);
                }
                long commandsSent = System.nanoTime();
                List<String> otherKafkaKeys = sendCredits(OTHER, otherBroker, otherReplies, producer, rabbitAccounts.get(OTHER),
                        kafkaAccounts.get(OTHER));
                otherOutcomes.put("rabbitmq", replies(otherBroker, otherReplies, FROZEN_COMMANDS, Duration.ofSeconds(20)));
                otherOutcomes.put("kafka", byStatus(arrived(otherKafka, otherKafkaKeys, Duration.ofSeconds(20))));
                otherCommandsMillis = (System.nanoTime() - commandsSent) / 1_000_000;
                assertEquals(0, devBroker.depth(devReplies), "no outcome for the frozen shard's commands yet");
                assertEquals(0, pausedPartitions("default"), "no partition of the default shard's clients paused");

                Response ready = RestAssured.given().when().get("/q/health/ready").andReturn();
                assertEquals(200, ready.statusCode(), ready.asString());
                String two = ready.path("checks.find { it.name == 'PostgreSQL' }.data.'shard two'");
                assertEquals("DOWN", two.substring(0, 4), ready.asString());
            } finally {
                ShardTwo.server().thaw();
            }
            System.out.printf("[shards] shard two frozen: dev's payment answered 503 in %d ms; %d payments of other's sent, "
                    + "answers %s; dev's commands sent: %d over RabbitMQ, %d over Kafka (its budget %d); other's: %d through "
                    + "each broker, outcomes %s within %d ms%n", waitedMillis, FROZEN_PAYMENTS, otherAnswers, FROZEN_COMMANDS,
                    devKafkaKeys.size(), config.messaging().kafka().maxHeld(), FROZEN_COMMANDS, otherOutcomes, otherCommandsMillis);
            assertEquals(Map.of(201, FROZEN_PAYMENTS), otherAnswers, "the default shard's client served throughout");
            assertEquals(Map.of("kafka", Map.of(201, (long) FROZEN_COMMANDS), "rabbitmq", Map.of(201, (long) FROZEN_COMMANDS)),
                    otherOutcomes, "the default shard's client's commands applied throughout");
            assertTrue(waitedMillis < 5_000, "answered within the statement's bound: " + waitedMillis + " ms");

            // thawed: the frozen shard's commands are applied, each once (a statement frozen mid-way may commit once
            // thawed: its command's next try is then a replay)
            Map<String, Map<Integer, Long>> devOutcomes = new TreeMap<>();
            devOutcomes.put("kafka", byStatus(arrived(devKafka, devKafkaKeys, Duration.ofSeconds(60))));
            devOutcomes.put("rabbitmq", replies(devBroker, devReplies, FROZEN_COMMANDS, Duration.ofSeconds(60)));
            long wrong = 0;
            int accounts = 0;
            for (ApiClient client : new ApiClient[] {DEV, OTHER}) {
                List<String> credited = new ArrayList<>(rabbitAccounts.get(client));
                credited.addAll(kafkaAccounts.get(client));
                for (String account : credited) {
                    wrong += client.balance(account) == 5 && client.entryCount(account) == 1 ? 0 : 1;
                }
                accounts += credited.size();
            }
            System.out.printf("[shards] shard two thawed: outcomes of its client's commands %s; accounts not credited "
                    + "exactly once %d of %d%n", devOutcomes, wrong, accounts);
            assertEquals(Map.of("kafka", Map.of(201, (long) devKafkaKeys.size()), "rabbitmq", Map.of(201, (long) FROZEN_COMMANDS)),
                    devOutcomes, "the frozen shard's commands applied once it is back");
            assertEquals(0, wrong, "each command applied once");
        }
        // the same key gets its one answer (the frozen statement may have committed once thawed: a replay then)
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertEquals(201, DEV.postTransaction(devAccount, devKey, transaction("CREDIT", 10, 1)).statusCode()));
        assertEquals(10, DEV.balance(devAccount));
    }

    /** A credit of 5 on each account, as a command of {@code client}'s: over RabbitMQ, then over Kafka; the Kafka ones' keys. */
    private static List<String> sendCredits(ApiClient client, Broker broker, String replies, KafkaProducer<byte[], byte[]> producer,
                                            List<String> overRabbitMq, List<String> overKafka) throws Exception {
        for (String account : overRabbitMq) {
            broker.publish(Broker.command(newKey(), client.id(), replies).build(), credit(account));
        }
        List<String> keys = new ArrayList<>();
        for (String account : overKafka) {
            String key = newKey();
            keys.add(key);
            producer.send(KafkaBroker.command(client.id(), account, credit(account, 1), "idempotency-key", key));
        }
        producer.flush();
        return keys;
    }

    /** The statuses of the next {@code count} outcomes in the reply queue, each within {@code bound}. */
    private static Map<Integer, Long> replies(Broker broker, String queue, int count, Duration bound) throws Exception {
        Map<Integer, Long> statuses = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            statuses.merge(broker.next(queue, bound).status(), 1L, Long::sum);
        }
        return statuses;
    }

    /** One credit on each partition of {@code client}'s commands topic, each applied. */
    private static void warmUp(KafkaProducer<byte[], byte[]> producer, ApiClient client, KafkaBroker.Reader outcomes) throws Exception {
        String topic = "ledger.commands." + client.id();
        List<String> keys = new ArrayList<>();
        for (PartitionInfo partition : producer.partitionsFor(topic)) {
            String account = client.newAccount();
            String key = newKey();
            keys.add(key);
            ProducerRecord<byte[], byte[]> command = KafkaBroker.command(client.id(), account, credit(account, 1), "idempotency-key", key);
            producer.send(new ProducerRecord<>(topic, partition.partition(), command.key(), command.value(), command.headers()));
        }
        producer.flush();
        for (KafkaBroker.Received outcome : outcomes.await(keys.size(), keyed(keys), Duration.ofSeconds(60))) {
            assertEquals(201, outcome.status(), outcome.value());
        }
    }

    /** Kafka commands of the default shard's client sent while shard two is down. */
    private static final int KAFKA_SERVED_COMMANDS = 20;

    /** Kafka commands retried in place so far. */
    private static double kafkaRetried() {
        return Metrics.value(metrics(), "ledger_commands_total{outcome=\"redelivered\",problem=\"none\",transport=\"kafka\"}").orElse(0);
    }

    /** Kafka partitions of commands the service paused because {@code shard} holds its budget of commands. */
    private static double pausedPartitions(String shard) {
        return kafkaGauge("ledger_commands_paused_partitions", shard);
    }

    /** The gauge {@code name} of {@code shard}, -1 when there is none. */
    private static double kafkaGauge(String name, String shard) {
        return Metrics.value(metrics(), name + "{shard=\"" + shard + "\"}").orElse(-1);
    }

    /** The outcomes of these keys that arrive within {@code bound}: all of them, or those that came. */
    private static List<KafkaBroker.Received> arrived(KafkaBroker.Reader reader, List<String> keys, Duration bound) {
        try {
            return reader.await(keys.size(), keyed(keys), bound);
        } catch (AssertionError notAll) {
            return reader.drain(keyed(keys), Duration.ZERO);
        }
    }

    private static Predicate<KafkaBroker.Received> keyed(List<String> keys) {
        Set<String> wanted = new HashSet<>(keys); // contains(null) is false: an outcome may have no key
        return received -> wanted.contains(received.header("idempotency-key"));
    }

    private static Map<Integer, Long> byStatus(List<KafkaBroker.Received> outcomes) {
        return outcomes.stream().collect(Collectors.groupingBy(KafkaBroker.Received::status, TreeMap::new, Collectors.counting()));
    }

    private static String credit(String account, long sequence) {
        return "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":5,\"sequence\":" + sequence + "}";
    }

    /** Payments of the default shard's client while shard two is frozen. */
    private static final int FROZEN_PAYMENTS = 20;
    /** Commands of each client through each broker while shard two is frozen. */
    private static final int FROZEN_COMMANDS = 10;

    /** Payments of each client in {@link #eachClientsStatementsAreCountedUnderItsShard}. */
    private static final int PAYMENTS = 40;

    private static String metrics() {
        return RestAssured.given().when().get("/q/metrics").asString();
    }

    /** PostgreSQL statements that succeeded on {@code shard}, as /q/metrics counts them. */
    private static double statements(String shard) {
        return Metrics.value(metrics(), "ledger_dependency_calls_seconds_count{call=\"statement\",dependency=\"postgres\",result=\"ok\",shard=\""
                + shard + "\"}").orElse(0);
    }

    /** Commands of each client sent while shard two is down. */
    private static final int COMMANDS = 10;
    /** RabbitMQ commands given back to the broker to be tried again, so far. */
    private static double redelivered() {
        return Metrics.value(RestAssured.given().when().get("/q/metrics").asString(),
                "ledger_commands_total{outcome=\"redelivered\",problem=\"none\",transport=\"rabbitmq\"}").orElse(0);
    }

    private static String credit(String account) {
        return "{\"accountId\":\"" + account + "\",\"type\":\"CREDIT\",\"amount\":5,\"sequence\":1}";
    }

    private static double pauses() {
        return Metrics.value(RestAssured.given().when().get("/q/metrics").asString(), "ledger_commands_pauses_total").orElse(0);
    }

    private static double releasedOnShardTwo() {
        return Metrics.value(RestAssured.given().when().get("/q/metrics").asString(),
                "ledger_transfers_expired_total{shard=\"two\"}").orElse(0);
    }

    private static String transferStatus(String id) throws Exception {
        try (Connection db = ShardTwo.connect(); PreparedStatement query = db.prepareStatement("SELECT status FROM transfers WHERE id = ?")) {
            query.setObject(1, UUID.fromString(id));
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getString(1);
            }
        }
    }

    private static long count(String shard, String sql, String id) throws Exception {
        try (Connection db = "default".equals(shard) ? Sql.connect() : ShardTwo.connect();
             PreparedStatement query = db.prepareStatement(sql)) {
            query.setObject(1, UUID.fromString(id));
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    /** The idempotency records of {@code client}'s requests that created these resources. */
    private static long countRecords(String shard, String client, String[] resources) throws Exception {
        try (Connection db = "default".equals(shard) ? Sql.connect() : ShardTwo.connect();
             PreparedStatement query = db.prepareStatement(
                     "SELECT count(*) FROM idempotency_records WHERE client = ? AND resource_id = ANY (?)")) {
            query.setString(1, client);
            query.setArray(2, db.createArrayOf("uuid", java.util.Arrays.stream(resources).map(UUID::fromString).toArray()));
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }
}
