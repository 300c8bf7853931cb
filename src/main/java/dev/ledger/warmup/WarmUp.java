package dev.ledger.warmup;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.account.AccountService;
import dev.ledger.config.LedgerConfig;
import dev.ledger.idempotency.IdempotencyStore;
import dev.ledger.security.ApiKeys;
import dev.ledger.transaction.TransactionService;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.MultithreadEventLoopGroup;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.vertx.core.runtime.context.VertxContextSafetyToggle;
import io.smallrye.common.vertx.VertxContext;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Ready means able to answer within the bounds, and a fresh instance is not, by itself: its first
 * requests open the PostgreSQL pool's connections and run the request path (HTTP, authentication,
 * Hibernate's queries, JSON) for the first time, and on a busy machine the first burst after a start
 * kept the event loops busy with that cold code until the answers of PostgreSQL waited past
 * {@code ledger.database.timeout}: 503s from a healthy instance. So readiness waits (this check)
 * until, at start, every connection of the pool has been opened, from every event loop, and the
 * instance has sent itself {@code ledger.warm-up.rounds} rounds of requests over loopback, as a
 * client does: each read of the API and a POST with an invalid body, for an account that does not
 * exist; before them, looks at idempotency keys nobody holds. Nothing is written: the reads answer 404,
 * the POST 400 before any key is reserved. They authenticate with a random key that exists only
 * during the warm-up ({@link ApiKeys#grantWarmUpKey}), as a client that owns nothing, and their HTTP
 * metrics are removed afterwards, so that dashboards see none of them. Reads of data that exists take
 * a path those never reach (the page query, the entities, their JSON), so each round also reads one
 * existing account and its transactions inside the process, rendering them as the API would and
 * dropping the result.
 *
 * <p>A call that fails is only counted; a warm-up that cannot open the pool (PostgreSQL down at
 * start) or takes longer than {@code ledger.warm-up.timeout} ends anyway: the dependencies' own
 * checks then say whether the instance can serve.
 */
@Readiness
@ApplicationScoped
public class WarmUp implements HealthCheck {
    private static final Logger LOG = Logger.getLogger(WarmUp.class);
    /** Rounds at once: enough to use every event loop, few enough that none waits for a connection. */
    private static final int CONCURRENCY = 4;

    private final Pool pool;
    private final IdempotencyStore store;
    private final ApiKeys keys;
    private final MeterRegistry metrics;
    private final LedgerConfig.WarmUp settings;
    private final int connections;
    private final Vertx vertx;
    private final AccountService accounts;
    private final TransactionService transactions;
    private final ObjectMapper json;
    private final AtomicInteger failed = new AtomicInteger();
    private volatile boolean done;

    public WarmUp(Pool pool, IdempotencyStore store, ApiKeys keys, MeterRegistry metrics, LedgerConfig config,
                  @ConfigProperty(name = "quarkus.datasource.reactive.max-size") int connections, Vertx vertx,
                  AccountService accounts, TransactionService transactions, ObjectMapper json) {
        this.accounts = accounts;
        this.transactions = transactions;
        this.json = json;
        this.pool = pool;
        this.store = store;
        this.keys = keys;
        this.metrics = metrics;
        this.settings = config.warmUp();
        this.connections = connections;
        this.vertx = vertx;
    }

    void start(@Observes StartupEvent started) {
        if (settings.rounds() <= 0) {
            done = true;
            return;
        }
        // Requests arrive on every event loop: from a thread outside Vert.x, each new context is on the next loop.
        int loops = ((MultithreadEventLoopGroup) vertx.nettyEventLoopGroup()).executorCount();
        List<Context> contexts = new ArrayList<>(loops);
        for (int i = 0; i < loops; i++) {
            contexts.add(vertx.getOrCreateContext());
        }
        String key = keys.grantWarmUpKey();
        // HTTP/1.1 and HTTP/2 (cleartext, upgraded from 1.1, as java.net.http and curl --http2 ask): clients use both
        List<HttpClient> http = List.of(
                vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port())
                        .setKeepAlive(true).setMaxPoolSize(2 * loops)),
                vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port())
                        .setProtocolVersion(HttpVersion.HTTP_2).setHttp2ClearTextUpgrade(true)
                        .setHttp2MaxPoolSize(loops)));
        long begin = System.nanoTime();
        VertxContext.createNewDuplicatedContext(contexts.get(0)).runOnContext(ignored -> openConnections(contexts)
                .chain(this::idempotencyStore)
                .chain(this::sample)
                .chain(sample -> Multi.createFrom().range(0, settings.rounds())
                        .onItem().transformToUni(round -> Uni.join().all(
                                        round(http.get(round % http.size()), key),
                                        read(contexts.get(round % loops), sample))
                                .andCollectFailures())
                        .merge(CONCURRENCY)
                        .collect().last())
                .ifNoItem().after(settings.timeout()).fail()
                .eventually(() -> {
                    keys.revokeWarmUpKey();
                    forgetTheWarmUpsHttpMetrics();
                    return Uni.join().all(http.stream().map(client -> Uni.createFrom().completionStage(
                            client.close().toCompletionStage())).toList()).andCollectFailures();
                })
                .subscribe().with(
                        ignoredResult -> finished("Warmed up: %d connections opened, %d rounds of requests (%d calls failed), in %d ms",
                                connections, settings.rounds(), failed.get(), (System.nanoTime() - begin) / 1_000_000),
                        failure -> finished("Warm-up ended early (%s) after %d ms; the dependencies' checks decide readiness",
                                failure.toString(), (System.nanoTime() - begin) / 1_000_000)));
    }

    private void finished(String message, Object... args) {
        done = true;
        LOG.infof(message, args);
    }

    /** The port this instance listens on, once the HTTP server has started (a random one is known by then). */
    private static int port() {
        String setting = LaunchMode.current() == LaunchMode.TEST ? "quarkus.http.test-port" : "quarkus.http.port";
        return ConfigProvider.getConfig().getOptionalValue(setting, Integer.class).orElse(8080);
    }

    /** As many statements at once as the pool has connections, from every event loop: each opens one. */
    private Uni<Void> openConnections(List<Context> contexts) {
        return Multi.createFrom().range(0, connections)
                .onItem().transformToUniAndMerge(i -> on(contexts.get(i % contexts.size()),
                        () -> pool.withConnection(connection -> connection.query("SELECT 1").execute())))
                .collect().last().replaceWithVoid();
    }

    /**
     * A look at idempotency keys nobody holds, one after the other, in the chosen store: it loads the
     * scripts into Redis (or opens the DynamoDB client's connections) and warms the path of every POST's two calls. One at a time, so that a slow first call on a busy
     * machine cannot open the Redis breaker (Redis being away is the Redis check's to say).
     */
    private Uni<Void> idempotencyStore() {
        return Multi.createFrom().range(0, Math.min(settings.rounds(), 50))
                .onItem().transformToUniAndConcatenate(i -> counted(store.inFlight("idem:{warm-up-" + UUID.randomUUID() + "}")))
                .collect().last().replaceWithVoid();
    }

    /** An account with transactions, if the ledger has one: its id, its owner, one of its transactions. */
    private record Sample(UUID account, String owner, UUID transaction) {
    }

    private Uni<Sample> sample() {
        return pool.query("SELECT e.account_id, a.owner, e.id FROM ledger_entries e JOIN accounts a ON a.id = e.account_id LIMIT 1")
                .execute()
                .map(rows -> rows.size() == 0 ? null : rows.iterator().next())
                .map(row -> row == null ? null : new Sample(row.getUUID(0), row.getString(1), row.getUUID(2)))
                .onFailure().recoverWithNull();
    }

    /** The reads of an existing account, rendered as the API renders them, inside the process; the result is dropped. */
    private Uni<Void> read(Context loop, Sample sample) {
        if (sample == null) {
            return Uni.createFrom().voidItem();
        }
        return Uni.join().all(
                        counted(on(loop, () -> accounts.find(sample.account(), sample.owner()).map(this::render))),
                        counted(on(loop, () -> transactions.list(sample.account(), sample.owner(), 0, 50).map(this::render))),
                        counted(on(loop, () -> transactions.find(sample.account(), sample.owner(), sample.transaction()).map(this::render))))
                .andCollectFailures().replaceWithVoid();
    }

    private byte[] render(Object view) {
        try {
            return json.writeValueAsBytes(view);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One round of requests as a client sends them, each answered without anything written. */
    private Uni<Void> round(HttpClient http, String key) {
        String account = "/accounts/" + UUID.randomUUID();
        return Uni.join().all(
                        request(http, key, HttpMethod.GET, account, null, 404),
                        request(http, key, HttpMethod.GET, account + "/transactions", null, 404),
                        request(http, key, HttpMethod.GET, account + "/transactions/" + UUID.randomUUID(), null, 404),
                        request(http, key, HttpMethod.POST, account + "/transactions", "{\"type\":\"CREDIT\"}", 400))
                .andCollectFailures().replaceWithVoid();
    }

    private Uni<Void> request(HttpClient http, String key, HttpMethod method, String path, String body, int expected) {
        RequestOptions options = new RequestOptions().setMethod(method).setURI(path)
                .putHeader("Authorization", "Bearer " + key);
        if (body != null) {
            options.putHeader("Content-Type", "application/json").putHeader("Idempotency-Key", "warm-up-" + UUID.randomUUID());
        }
        return counted(Uni.createFrom().completionStage(() -> http.request(options)
                        .compose(request -> body == null ? request.send() : request.send(body))
                        .compose(response -> response.body().map(ignored -> response.statusCode()))
                        .toCompletionStage())
                .map(status -> {
                    if (status != expected) {
                        throw new IllegalStateException(method + " " + path + " answered " + status);
                    }
                    return null;
                }));
    }

    private Uni<Void> counted(Uni<?> call) {
        return call.replaceWithVoid().onFailure().recoverWithItem(failure -> {
            failed.incrementAndGet();
            LOG.debugf("Warm-up call failed: %s", failure);
            return null;
        });
    }

    /**
     * The call on a Vert.x context of its own on {@code loop}'s event loop, marked safe as a request's is
     * (Hibernate Reactive keeps its session there).
     */
    private static Uni<Void> on(Context loop, Supplier<Uni<?>> call) {
        return Uni.createFrom().emitter(emitter -> {
            Context own = VertxContext.createNewDuplicatedContext(loop);
            VertxContextSafetyToggle.setContextSafe(own, true);
            own.runOnContext(ignored -> Uni.createFrom().<Object>deferred(() -> call.get().map(item -> item)).replaceWithVoid()
                    .subscribe().with(emitter::complete, emitter::fail));
        });
    }

    /** The HTTP server metrics of the API's paths, which only the warm-up has used before readiness. */
    private void forgetTheWarmUpsHttpMetrics() {
        List<Meter> warmUps = metrics.getMeters().stream()
                .filter(meter -> meter.getId().getName().startsWith("http.server"))
                .filter(meter -> {
                    String uri = meter.getId().getTag("uri");
                    return uri != null && uri.startsWith("/accounts");
                })
                .toList();
        warmUps.forEach(metrics::remove);
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("Warm-up").status(done).withData("rounds", settings.rounds()).build();
    }
}
