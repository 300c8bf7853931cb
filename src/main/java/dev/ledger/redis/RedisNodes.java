package dev.ledger.redis;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Breakers;
import dev.ledger.dependency.Deadline;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.redis.client.Command;
import io.vertx.mutiny.redis.client.Redis;
import io.vertx.mutiny.redis.client.Request;
import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.RedisClientType;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.impl.types.ErrorType;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Where each key's commands go. Against one Redis server (the default {@code quarkus.redis.client-type})
 * every key goes to it, through Quarkus' client. Against a Redis Cluster
 * ({@code quarkus.redis.client-type=cluster}) each key goes to the primary that serves its hash slot,
 * known from {@code CLUSTER SLOTS} asked of the known nodes ({@code quarkus.redis.hosts} are the first
 * ones). Each primary has a connection pool (sized by Quarkus' own {@code quarkus.redis.max-pool-size}
 * and {@code max-pool-waiting}) and a circuit breaker of its own ({@link Breakers}, policy
 * {@code ledger.fast-path.breaker.*}), so one shard's outage sends only its keys to Postgres, and one
 * turn's commands leave as one batch per primary ({@link RedisPipeline}).
 *
 * <p>Not Quarkus' cluster client: it takes a connection to every node of the cluster, replicas
 * included, for every command or batch, fails everything while any one node is unreachable, and
 * refuses a batch whose keys live on several nodes.
 *
 * <p>The slot map is asked for again when a node answers {@code MOVED} or {@code CLUSTERDOWN}, when
 * a node cannot be reached, when a breaker opens or half-opens (a failover under way), and every
 * 5 s: one request at a time, at most every 200 ms. A reason that comes while a request is under way
 * or within the 200 ms is not dropped: one more request follows when they are over, so the map is
 * never older than the last sign of a change (a failover's last {@code MOVED} can come just after a
 * request that asked a node which had not heard of it yet). A command answered {@code MOVED} or
 * {@code ASK} follows the redirection once.
 */
@ApplicationScoped
public class RedisNodes {
    private static final Logger LOG = Logger.getLogger(RedisNodes.class);
    private static final long REFRESH_INTERVAL_NANOS = Duration.ofMillis(200).toNanos();
    private static final Duration SLOTS_TIMEOUT = Duration.ofMillis(500);
    private static final Duration PERIODIC_REFRESH = Duration.ofSeconds(5);
    /** A node's answer to {@link #ping}: it answered. */
    public static final String UP = "UP";

    private final Vertx vertx;
    private final boolean cluster;
    private final List<String> seeds;
    private final String scheme;
    private final String userInfo;
    private final int poolSize;
    private final int poolWaiting;
    private final Breakers breakers;
    private final Breakers.Policy policy;
    private final Map<String, RedisNode> nodes = new ConcurrentHashMap<>();
    /** The standalone server, or in a cluster the first seed, which redirects until the slot map is known. */
    private final RedisNode first;
    /** In a cluster, the primary of each slot; null until known. */
    private volatile RedisNode[] slots;
    /** A request for the slot map is under way, or waits for the end of the 200 ms. */
    private final AtomicBoolean refreshing = new AtomicBoolean();
    /** A reason to ask came since the last request left. */
    private final AtomicBoolean wanted = new AtomicBoolean();
    private volatile long lastRefresh = System.nanoTime() - REFRESH_INTERVAL_NANOS;

    public RedisNodes(Redis redis, Vertx vertx, LedgerConfig config, Breakers breakers,
                      @ConfigProperty(name = "quarkus.redis.client-type") Optional<String> clientType,
                      @ConfigProperty(name = "quarkus.redis.hosts") Optional<String> hosts,
                      @ConfigProperty(name = "quarkus.redis.max-pool-size") int poolSize,
                      @ConfigProperty(name = "quarkus.redis.max-pool-waiting") int poolWaiting) {
        this.vertx = vertx;
        this.breakers = breakers;
        // unset is Quarkus' own default, a standalone server
        this.cluster = clientType.map(type -> RedisClientType.CLUSTER.name().equalsIgnoreCase(type.trim())).orElse(false);
        this.seeds = hosts.stream().flatMap(value -> Arrays.stream(value.split(",")))
                .map(String::trim).filter(host -> !host.isEmpty()).toList();
        URI seed = URI.create(seeds.isEmpty() ? "redis://127.0.0.1:6379" : seeds.get(0));
        this.scheme = seed.getScheme();
        this.userInfo = seed.getRawUserInfo() == null ? "" : seed.getRawUserInfo() + "@";
        this.poolSize = poolSize;
        this.poolWaiting = Math.max(poolWaiting, poolSize);
        this.policy = Breakers.Policy.of(config.fastPath().breaker());
        if (cluster) {
            this.first = node(seed.getHost() + ":" + (seed.getPort() < 0 ? 6379 : seed.getPort()));
        } else {
            this.first = new RedisNode(seed.getHost() + ":" + seed.getPort(), redis, breaker("redis"));
        }
    }

    /** At start, while the store is Redis ({@code dev.ledger.fastpath.FastPath}): the slot map, and in a cluster its periodic refresh. */
    public void start() {
        refresh();
        if (cluster) {
            vertx.setPeriodic(PERIODIC_REFRESH.toMillis(), id -> refresh());
        }
    }

    /** Whether the service talks to a Redis Cluster. */
    public boolean cluster() {
        return cluster;
    }

    /** The node that serves {@code key}. */
    RedisNode nodeFor(String key) {
        RedisNode[] map = slots;
        if (map == null) {
            refresh();
            return first;
        }
        return map[HashSlot.of(key)];
    }

    /** The nodes the service writes to: the one server, or the cluster's primaries as last known. */
    public List<RedisNode> primaries() {
        RedisNode[] map = slots;
        if (map == null) {
            return List.of(first);
        }
        return List.copyOf(new LinkedHashSet<>(Arrays.asList(map)));
    }

    /** Sends {@code request} to {@code node} alone, following a MOVED or ASK redirection once. */
    Uni<Response> send(RedisNode node, Request request) {
        return node.client().send(request)
                .onFailure(RedisNodes::isRedirection).recoverWithUni(failure -> redirected(node, failure, request))
                .onFailure().invoke(this::noticed);
    }

    /** Sends the requests to {@code node} as one pipelined write. */
    Uni<List<Response>> batch(RedisNode node, List<Request> requests) {
        return node.client().batch(requests).onFailure().invoke(this::noticed);
    }

    private Uni<Response> redirected(RedisNode from, Throwable redirection, Request request) {
        // "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381"
        String[] parts = redirection.getMessage().split(" ");
        String address = parts[2].startsWith(":") ? from.address().substring(0, from.address().lastIndexOf(':')) + parts[2] : parts[2];
        RedisNode target = node(address);
        if (parts[0].equals("MOVED")) {
            refresh();
            return target.client().send(request);
        }
        return target.client().batch(List.of(Request.cmd(Command.ASKING), request)).map(replies -> replies.get(1));
    }

    private static boolean isRedirection(Throwable failure) {
        String message = failure.getMessage();
        return failure instanceof ErrorType && message != null && (message.startsWith("MOVED ") || message.startsWith("ASK "));
    }

    /** A failure that may mean the cluster changed: the slot map is asked for again. */
    private void noticed(Throwable failure) {
        String message = Objects.toString(failure.getMessage(), "");
        if (!(failure instanceof ErrorType) || message.contains("MOVED ") || message.contains("CLUSTERDOWN")) {
            refresh();
        }
    }

    /**
     * Asks the known nodes for the slot map: now, or when the request under way is over or 200 ms
     * have passed since the last one.
     */
    void refresh() {
        if (!cluster) {
            return;
        }
        wanted.set(true);
        refreshWhenFree();
    }

    private void refreshWhenFree() {
        if (!refreshing.compareAndSet(false, true)) {
            return; // the request under way looks at `wanted` when it is over
        }
        long waitMillis = Duration.ofNanos(REFRESH_INTERVAL_NANOS - (System.nanoTime() - lastRefresh)).toMillis();
        if (waitMillis > 0) {
            vertx.setTimer(waitMillis, id -> askForTheSlotMap());
        } else {
            askForTheSlotMap();
        }
    }

    private void askForTheSlotMap() {
        wanted.set(false);
        Set<RedisNode> candidates = new LinkedHashSet<>(primaries());
        nodes.values().forEach(candidates::add);
        askForSlots(new ArrayList<>(candidates), 0).subscribe().with(map -> {
            RedisNode[] before = slots;
            slots = map;
            if (before == null || !new LinkedHashSet<>(Arrays.asList(before)).equals(new LinkedHashSet<>(Arrays.asList(map)))) {
                LOG.infof("Redis Cluster primaries: %s", primaries().stream().map(RedisNode::address).toList());
            }
            askedForTheSlotMap();
        }, failure -> {
            LOG.warnf("No Redis Cluster node answered CLUSTER SLOTS (%s)", failure.getMessage());
            askedForTheSlotMap();
        });
    }

    private void askedForTheSlotMap() {
        lastRefresh = System.nanoTime();
        refreshing.set(false);
        if (wanted.get()) {
            refreshWhenFree();
        }
    }

    private Uni<RedisNode[]> askForSlots(List<RedisNode> candidates, int index) {
        if (index >= candidates.size()) {
            return Uni.createFrom().failure(new IllegalStateException("none of " + candidates.size() + " nodes answered"));
        }
        RedisNode asked = candidates.get(index);
        return asked.client().send(Request.cmd(Command.CLUSTER).arg("SLOTS"))
                .ifNoItem().after(SLOTS_TIMEOUT).fail()
                .map(reply -> slotMap(asked, reply))
                .onFailure().recoverWithUni(failure -> askForSlots(candidates, index + 1));
    }

    /** CLUSTER SLOTS: for each range {@code [start, end, [host, port, id, ...] of the primary, replicas...]}. */
    private RedisNode[] slotMap(RedisNode asked, Response reply) {
        RedisNode[] map = new RedisNode[HashSlot.COUNT];
        int covered = 0;
        for (Response range : reply) {
            Response primary = range.get(2);
            String host = primary.get(0) == null ? "" : primary.get(0).toString();
            if (host.isEmpty() || host.equals("?")) {
                host = asked.address().substring(0, asked.address().lastIndexOf(':'));
            }
            RedisNode node = node(host + ":" + primary.get(1).toInteger());
            for (int slot = range.get(0).toInteger(); slot <= range.get(1).toInteger(); slot++) {
                map[slot] = node;
                covered++;
            }
        }
        if (covered < HashSlot.COUNT) {
            // a slot no primary serves answers CLUSTERDOWN wherever it is sent: the first seed says so
            for (int slot = 0; slot < map.length; slot++) {
                map[slot] = map[slot] == null ? first : map[slot];
            }
        }
        return map;
    }

    /** The node at {@code address} ({@code host:port}), with a client and a breaker made at first use. */
    private RedisNode node(String address) {
        return nodes.computeIfAbsent(address, ignored -> {
            RedisOptions options = new RedisOptions().setType(RedisClientType.STANDALONE)
                    .setConnectionString(scheme + "://" + userInfo + address)
                    .setMaxPoolSize(poolSize).setMaxPoolWaiting(poolWaiting);
            return new RedisNode(address, Redis.createClient(vertx, options), breaker("redis@" + address));
        });
    }

    /**
     * The breaker of a node: {@code redis}, or {@code redis@host:port} per node of a cluster (in /q/metrics
     * under that name). Its opening or half-opening may mean a failover: the slot map is asked for again,
     * so that the trial call goes to the new primary.
     */
    private CircuitBreaker breaker(String name) {
        return breakers.create(name, policy, "POSTs skip " + (cluster ? "this Redis node" : "Redis") + " until it answers again",
                state -> {
                    if (state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.HALF_OPEN) {
                        refresh();
                    }
                });
    }

    /**
     * Each node's answer to PING within {@code timeout} ({@link Deadline}): its address, and {@code UP} or why
     * not (no answer in time, or the failure).
     */
    public Uni<Map<String, String>> ping(Duration timeout) {
        List<RedisNode> primaries = primaries();
        List<Uni<String>> pings = primaries.stream().map(node -> Deadline.within(timeout, "Redis " + node.address(),
                        () -> node.client().send(Request.cmd(Command.PING)))
                .map(pong -> UP).onFailure().recoverWithItem(failure -> String.valueOf(failure.getMessage()))).toList();
        return Uni.join().all(pings).andFailFast().map(answers -> {
            Map<String, String> result = new LinkedHashMap<>();
            for (int i = 0; i < primaries.size(); i++) {
                result.put(primaries.get(i).address(), answers.get(i));
            }
            return result;
        });
    }
}
