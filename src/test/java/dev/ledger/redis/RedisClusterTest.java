package dev.ledger.redis;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.ledger.dependency.Breakers;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotencyStore;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.idempotency.KeyWaiters;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.Reservation;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.EventLoopTurn;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.RedisCluster;
import dev.ledger.testing.RedisClusterProfile;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The idempotency store against a real Redis Cluster of three primaries (.ci/redis-cluster): each key
 * on the primary of its hash slot, one write per primary for a turn's commands, scripts reloaded by the
 * primary that lost them, and a stalled primary opening only its own breaker.
 */
@QuarkusTest
@TestProfile(RedisClusterProfile.class)
class RedisClusterTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    IdempotencyStore store;

    @Inject
    RedisPipeline pipeline;

    @Inject
    RedisNodes nodes;

    @Inject
    Vertx vertx;

    @Inject
    KeyWaiters waiters;

    @Inject
    RedisSettledKeys settledKeys;

    @Inject
    Breakers breakers;

    @Inject
    MeterRegistry metrics;

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void theWholeClusterIsKnown() {
        RedisCluster.start();
        breakers.all().forEach(CircuitBreaker::reset);
        await().atMost(WAIT).until(() -> {
            nodes.refresh();
            return nodes.primaries().stream().map(RedisNode::address).sorted().toList()
                    .equals(RedisCluster.agreedPrimaries().stream().map(port -> "127.0.0.1:" + port).toList());
        });
    }

    @Test
    void aWaiterIsWokenByACompletionOnAnyPrimary() {
        // the subscription is on one primary; a PUBLISH from the others' scripts reaches it too
        waiters.settled(request().keyId(), Duration.ofMillis(1)).await().atMost(WAIT);
        await().atMost(WAIT).until(settledKeys::subscribed);
        for (int port : RedisCluster.primaries()) {
            IdempotentRequest request = requestsOn(port, 1).get(0);
            double before = metrics.counter("ledger.idempotency.wakeups", "by", "message").count();
            var woken = waiters.settled(request.keyId(), Duration.ofSeconds(30)).subscribeAsCompletionStage();
            await().atMost(WAIT).until(() -> metrics.get("ledger.idempotency.waiting").gauge().value() == 1);
            store.complete(request, "owner-" + UUID.randomUUID(),
                    new RecordedResponse(201, "application/json", null, "{}".getBytes())).await().atMost(WAIT);
            woken.toCompletableFuture().join();
            assertEquals(before + 1, metrics.counter("ledger.idempotency.wakeups", "by", "message").count(),
                    "woken by the message of the primary at " + port);
        }
    }

    private static IdempotentRequest request() {
        return IdempotentRequest.of("cluster", new IdempotencyKey(UUID.randomUUID().toString()), "POST", "/p",
                JsonNodeFactory.instance.objectNode());
    }

    /** Requests whose keys live on the primary at {@code port}. */
    private List<IdempotentRequest> requestsOn(int port, int count) {
        List<IdempotentRequest> requests = new ArrayList<>();
        while (requests.size() < count) {
            IdempotentRequest request = request();
            if (nodes.nodeFor(RedisIdempotencyStore.key(request)).address().equals("127.0.0.1:" + port)) {
                requests.add(request);
            }
        }
        return requests;
    }

    @Test
    void everyKeyGoesToThePrimaryThatServesItsSlot() {
        for (int i = 0; i < 12; i++) {
            String key = RedisIdempotencyStore.key(request());
            int slot = Integer.parseInt(RedisCluster.cli(RedisCluster.primaries().get(0), "CLUSTER", "KEYSLOT", key).trim());
            assertEquals(slot, HashSlot.of(key), key);
            assertEquals("127.0.0.1:" + RedisCluster.primaryOf(key), nodes.nodeFor(key).address(), key);
        }
    }

    @Test
    void oneTurnsCommandsLeaveAsOneWritePerPrimaryAndEachCallerGetsItsOwnReply() throws Exception {
        for (int port : RedisCluster.primaries()) { // the script cached on every primary
            store.reserve(requestsOn(port, 1).get(0), "warm-up").await().atMost(WAIT);
        }
        List<IdempotentRequest> requests = new ArrayList<>();
        Set<String> primaries = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            IdempotentRequest request = request();
            requests.add(request);
            primaries.add(nodes.nodeFor(RedisIdempotencyStore.key(request)).address());
        }
        assertEquals(3, primaries.size(), "30 keys spread over the three primaries");
        long writes = pipeline.sendsMade();
        long commands = pipeline.callsSent();

        List<Supplier<Uni<?>>> calls = new ArrayList<>();
        requests.forEach(request -> calls.add(() -> store.reserve(request, "owner-" + RedisIdempotencyStore.key(request))));
        long reserved = System.nanoTime();
        List<Object> replies = EventLoopTurn.inOneTurn(vertx, WAIT, calls);

        assertEquals(3, pipeline.sendsMade() - writes, "one write per primary for the whole turn");
        assertEquals(30, pipeline.callsSent() - commands, "no command sent twice or alone");
        for (int i = 0; i < requests.size(); i++) {
            assertInstanceOf(Reservation.Acquired.class, replies.get(i));
            String key = RedisIdempotencyStore.key(requests.get(i));
            String owner = RedisCluster.cli(RedisCluster.primaryOf(key), "HGET", key, "owner").trim();
            // the profile's lease is 3 s: on a machine slow enough to pass it, the reservation has expired
            boolean leaseOver = System.nanoTime() - reserved > Duration.ofSeconds(3).toNanos();
            assertEquals(leaseOver && owner.isEmpty() ? "" : "owner-" + key, owner);
        }
    }

    @Test
    void aPrimaryThatLostItsScriptsLoadsThemAgainWhileTheOthersRunThemBySha() throws Exception {
        int flushed = RedisCluster.primaries().get(0);
        for (int port : RedisCluster.primaries()) {
            store.reserve(requestsOn(port, 1).get(0), "warm-up").await().atMost(WAIT);
        }
        assertEquals("OK", RedisCluster.cli(flushed, "SCRIPT", "FLUSH").trim());
        List<Supplier<Uni<?>>> calls = new ArrayList<>();
        for (int port : RedisCluster.primaries()) {
            requestsOn(port, 3).forEach(request -> calls.add(() -> store.reserve(request, "A")));
        }
        EventLoopTurn.inOneTurn(vertx, WAIT, calls).forEach(reply -> assertInstanceOf(Reservation.Acquired.class, reply));
        String sha = LuaScript.load("reserve.lua").sha();
        for (int port : RedisCluster.primaries()) {
            assertEquals("1", RedisCluster.cli(port, "SCRIPT", "EXISTS", sha).trim(), "reserve.lua cached on " + port);
        }
    }

    @Test
    void aStalledPrimaryOpensOnlyItsOwnBreakerAndTheOtherKeysKeepTheFastPath() throws Exception {
        int stalled = RedisCluster.primaries().get(1);
        RedisNode node = nodes.nodeFor(RedisIdempotencyStore.key(requestsOn(stalled, 1).get(0)));
        assertEquals("OK", RedisCluster.cli(stalled, "CLIENT", "PAUSE", "1500", "ALL").trim());
        List<Supplier<Uni<?>>> calls = new ArrayList<>();
        requestsOn(stalled, 10).forEach(request -> calls.add(() -> store.reserve(request, "A")
                .onFailure().recoverWithItem(failure -> null)));
        EventLoopTurn.inOneTurn(vertx, WAIT, calls);
        assertEquals(CircuitBreaker.State.OPEN, node.breaker().getState(), "the stalled primary's breaker");
        for (int port : RedisCluster.primaries()) {
            if (port != stalled) {
                IdempotentRequest other = requestsOn(port, 1).get(0);
                assertInstanceOf(Reservation.Acquired.class, store.reserve(other, "B").await().atMost(WAIT));
                assertEquals(CircuitBreaker.State.CLOSED, nodes.nodeFor(RedisIdempotencyStore.key(other)).breaker().getState());
            }
        }
        // over the pause, the breaker lets a trial call through and closes
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
            store.reserve(request(), "C").onFailure().recoverWithItem(failure -> null).await().atMost(WAIT);
            store.reserve(requestsOn(stalled, 1).get(0), "C").onFailure().recoverWithItem(failure -> null).await().atMost(WAIT);
            return node.breaker().getState() == CircuitBreaker.State.CLOSED;
        });
    }

    @Test
    void paymentsAndTheirDuplicatesApplyOnceAcrossThePrimaries() throws Exception {
        given().when().get("/q/health/ready").then().statusCode(200)
                .body("checks.find { it.name == 'Redis (idempotency fast path)' }.data.redis", equalTo("UP"));
        PaymentLoad storm = new PaymentLoad("cluster-payments", ApiClient.DEV, List.of(base.toURI())).copies(3);
        storm.openAccounts(8);
        for (int i = 0; i < 3; i++) {
            storm.wave();
        }
        assertEquals(0, storm.reconcile(), "double applications");
        assertTrue(breakers.all().stream().allMatch(b -> b.getState() == CircuitBreaker.State.CLOSED));
    }
}
