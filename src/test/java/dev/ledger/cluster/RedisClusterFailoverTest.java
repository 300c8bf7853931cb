package dev.ledger.cluster;

import dev.ledger.dependency.Breakers;
import dev.ledger.redis.RedisNode;
import dev.ledger.redis.RedisNodes;
import dev.ledger.testing.ApiClient;
import dev.ledger.testing.PaymentLoad;
import dev.ledger.testing.RedisCluster;
import dev.ledger.testing.RedisClusterProfile;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Redis Cluster failovers under a storm of new payments and their duplicates: a primary killed with
 * SIGKILL (its replica promoted, with whatever it had not replicated lost), and a manual
 * {@code CLUSTER FAILOVER}. Nothing is applied twice, every 201 replays afterwards, the only error
 * answers are 503 and 409 {@code request-in-progress}, each with {@code Retry-After}, and the service
 * finds the new primaries by itself.
 */
@QuarkusTest
@TestProfile(RedisClusterProfile.class)
class RedisClusterFailoverTest {
    private static final int ACCOUNTS = 24;
    private static final int COPIES = 3;

    @Inject
    RedisNodes nodes;

    @Inject
    Breakers breakers;

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void aWholeCluster() {
        RedisCluster.start();
        breakers.all().forEach(CircuitBreaker::reset);
    }

    private PaymentLoad storm(String name) throws Exception {
        PaymentLoad storm = new PaymentLoad(name, ApiClient.DEV, List.of(base.toURI())).copies(COPIES);
        storm.openAccounts(ACCOUNTS);
        storm.wave();
        return storm;
    }

    /** The service writes to the primaries the cluster has now, once every node of it agrees on them. */
    private void theServiceFollowedTheCluster() {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            List<String> cluster = RedisCluster.agreedPrimaries().stream().map(port -> "127.0.0.1:" + port).toList();
            assertEquals(cluster, nodes.primaries().stream().map(RedisNode::address).sorted().toList());
        });
    }

    @Test
    void aPrimaryKilledMidStormAppliesNothingTwice() throws Exception {
        PaymentLoad storm = storm("cluster-sigkill");
        int victim = RedisCluster.primaries().get(0);
        CompletableFuture<Void> chaos = CompletableFuture.runAsync(() -> {
            try {
                RedisCluster.kill(victim);
                RedisCluster.awaitTakeOverFrom(victim);
                RedisCluster.start(); // the killed node comes back, as a replica of its successor
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        storm.wavesUntil(chaos, 3);
        theServiceFollowedTheCluster();
        assertEquals(0, storm.reconcile(), "double applications");
    }

    @Test
    void aManualFailoverMidStormAppliesNothingTwice() throws Exception {
        PaymentLoad storm = storm("cluster-failover");
        int replica = RedisCluster.replicaOf(RedisCluster.primaries().get(1));
        CompletableFuture<Void> chaos = CompletableFuture.runAsync(() -> RedisCluster.failover(replica));
        storm.wavesUntil(chaos, 3);
        theServiceFollowedTheCluster();
        assertEquals(0, storm.reconcile(), "double applications");
    }

    @Test
    void aFailoverNoRequestRunsIntoIsFoundByItself() {
        theServiceFollowedTheCluster();
        RedisCluster.failover(RedisCluster.replicaOf(RedisCluster.primaries().get(2)));
        // no request runs into a MOVED: only the periodic request for the slot map can find it
        theServiceFollowedTheCluster();
    }
}
