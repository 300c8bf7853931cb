package dev.ledger.transfer;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.CommandDoors;
import dev.ledger.testing.DoorsProfile;
import dev.ledger.testing.LedgerChecks;
import dev.ledger.testing.TransferStorm;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static dev.ledger.testing.LedgerApi.account;
import static dev.ledger.testing.LedgerApi.credit;
import static dev.ledger.testing.LedgerApi.newKey;
import static dev.ledger.testing.LedgerApi.openAccount;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A storm on a few accounts, 64 requests in flight, each sent (and each retry) through HTTP, RabbitMQ or Kafka at random
 * ({@link CommandDoors}): transfers both ways, holds (some expiring meanwhile, so the
 * expiry job works among the requests), posts, voids, reversals, debits and credits, and copies of requests
 * under one key. Nothing may answer 5xx (a deadlock included), nothing may apply twice, no account's available
 * may go below 0, and money is conserved: per currency the balances change exactly by the credits and debits
 * applied, each account's entries add up to its balance, and its pending amounts to its live holds. With the
 * patient dependencies of {@link DoorsProfile} (events on), so that a busy machine is not taken for a failure.
 */
@QuarkusTest
@TestProfile(DoorsProfile.class)
class TransferStormTest {
    private static final int REQUESTS = 1500;
    private static final int IN_FLIGHT = 64;
    /** Each account's money at the start: a few dozen of the storm's amounts (up to 2000), so that funds run short. */
    private static final long FUNDS = 20_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TestHTTPResource("/")
    URL base;

    @Inject
    DataSource dataSource;

    @Test
    void aStormOfTransfersBothWaysNeverDeadlocksNeverOverdrawsAndConservesMoney() throws Exception {
        Map<String, List<String>> accounts = new LinkedHashMap<>();
        for (String currency : List.of("EUR", "USD")) {
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < (currency.equals("EUR") ? 4 : 2); i++) {
                String id = openAccount(newKey(), currency).path("id");
                credit(id, FUNDS, 1);
                ids.add(id);
            }
            accounts.put(currency, ids);
        }
        Map<String, Long> before = totals(accounts);
        long deadlocksBefore = deadlocks();

        AtomicBoolean storming = new AtomicBoolean(true);
        AtomicLong lowestAvailable = new AtomicLong(Long.MAX_VALUE);
        AtomicLong reads = new AtomicLong();
        // a client reading the accounts all along, as fast as it can
        HttpClient http = HttpClient.newHttpClient();
        CompletableFuture<Void> watcher = CompletableFuture.runAsync(() -> {
            while (storming.get()) {
                for (String id : accounts.values().stream().flatMap(List::stream).toList()) {
                    try {
                        HttpResponse<String> read = http.send(HttpRequest.newBuilder(base.toURI().resolve("/accounts/" + id))
                                .header("Authorization", ApiClient.DEV.authorization()).build(), HttpResponse.BodyHandlers.ofString());
                        if (read.statusCode() == 200) {
                            lowestAvailable.accumulateAndGet(JSON.readTree(read.body()).get("available").asLong(), Math::min);
                            reads.incrementAndGet();
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        });
        long start = System.nanoTime();
        TransferStorm storm;
        Map<String, Long> sentBy;
        try (CommandDoors commands = new CommandDoors()) {
            // each request through HTTP, RabbitMQ or Kafka, and each retry of it through any of them
            storm = new TransferStorm(commands.anyOf(TransferStorm.http(ApiClient.DEV, base.toURI())), accounts, System.nanoTime());
            storm.run(REQUESTS, IN_FLIGHT);
            sentBy = commands.sentBy();
        } finally {
            storming.set(false);
            watcher.get(60, TimeUnit.SECONDS);
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000;

        Map<String, Long> after = totals(accounts);
        List<String> conservation = new ArrayList<>();
        for (String currency : accounts.keySet()) {
            conservation.add(currency + " total " + before.get(currency) + " -> " + after.get(currency) + " (change "
                    + (after.get(currency) - before.get(currency)) + "), credits less debits applied " + storm.netTransactions(currency));
        }
        List<String> ledger = ledgerDisagreements(accounts);
        long deadlocks = deadlocks() - deadlocksBefore;
        System.out.printf("[transfer-storm] %d in flight, %d s, sent by door %s: %s; conservation: %s; entries and holds against balances and "
                        + "pending amounts: %s; lowest available seen %d over %d reads; deadlocks reported by PostgreSQL %d%n",
                IN_FLIGHT, seconds, sentBy, storm.summary(), conservation,
                ledger.isEmpty() ? "all agree" : ledger, lowestAvailable.get(), reads.get(), deadlocks);

        for (String door : List.of("http", "rabbitmq", "kafka")) {
            assertTrue(sentBy.getOrDefault(door, 0L) > REQUESTS / 5, "sent by door " + sentBy);
        }
        assertEquals(0, storm.doubleApplications(), "double applications");
        assertEquals(List.of(), storm.inconsistentAnswers(), "a key answered two ways");
        for (Map.Entry<Integer, Long> status : storm.statuses().entrySet()) {
            assertTrue(List.of(200, 201, 409, 422).contains(status.getKey()), "answers " + storm.statuses());
        }
        assertTrue(storm.refusals().getOrDefault("/problems/insufficient-funds", 0L) > 0, "funds never ran short: " + storm.summary());
        assertTrue(storm.appliedByKind().getOrDefault("transfer", 0L) > 100, storm.summary());
        assertTrue(storm.appliedByKind().getOrDefault("reversal", 0L) > 10, storm.summary());
        assertTrue(storm.appliedByKind().getOrDefault("post", 0L) > 10, storm.summary());
        assertTrue(storm.appliedByKind().getOrDefault("void", 0L) > 0, storm.summary());
        for (String currency : accounts.keySet()) {
            assertEquals(storm.netTransactions(currency), after.get(currency) - before.get(currency), currency + ": " + conservation);
        }
        assertEquals(List.of(), ledger);
        assertTrue(lowestAvailable.get() >= 0, "available went below 0: " + lowestAvailable.get());
        for (List<String> ids : accounts.values()) {
            for (String id : ids) {
                assertTrue(((Number) account(id).path("available")).longValue() >= 0, id);
            }
        }
        assertEquals(0, deadlocks, "PostgreSQL reported deadlocks");
    }

    private Map<String, Long> totals(Map<String, List<String>> accounts) {
        Map<String, Long> totals = new LinkedHashMap<>();
        accounts.forEach((currency, ids) -> totals.put(currency,
                ids.stream().mapToLong(id -> ((Number) account(id).path("balance")).longValue()).sum()));
        return totals;
    }

    private List<String> ledgerDisagreements(Map<String, List<String>> accounts) throws Exception {
        try (Connection db = dataSource.getConnection()) {
            return LedgerChecks.disagreements(db, accounts.values().stream().flatMap(List::stream).toList());
        }
    }

    private long deadlocks() throws Exception {
        try (Connection db = dataSource.getConnection();
             PreparedStatement sql = db.prepareStatement("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
             ResultSet row = sql.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }
}
