package dev.ledger.shard;

import dev.ledger.config.LedgerConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.Configuration;
import org.jboss.logging.Logger;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

/**
 * The PostgreSQL primary of each client ({@link ShardLayout}): the pool of {@code quarkus.datasource.*} (the shard
 * {@code default}, Hibernate Reactive's too) for every client no shard names, and one pool per shard of
 * {@code ledger.shards.*}, made at start after its database is migrated with the same scripts as the default's
 * (Flyway, given the scripts as Quarkus found them). A layout the settings cannot hold stops the start.
 */
@Startup
@ApplicationScoped
public class Shards {
    private static final Logger LOG = Logger.getLogger(Shards.class);
    /** How often the migration of a shard down at start is tried again. */
    private static final java.time.Duration MIGRATION_RETRY = java.time.Duration.ofSeconds(5);

    private final ShardLayout layout;
    private final Pool defaultPool;
    private final Map<String, Pool> pools = new LinkedHashMap<>();
    /** Where moves put clients ({@code client_placements} on the shard default), over the layout; read every refresh. */
    private volatile Map<String, String> placements = Map.of();
    private final AtomicBoolean reading = new AtomicBoolean();
    private final Vertx vertx;
    private long timer = -1;
    /** The shards whose migration at start failed (down then), each with its migration, tried again until it succeeds. */
    private final Map<String, Runnable> unmigrated = new ConcurrentHashMap<>();
    private long migrating = -1;

    public Shards(LedgerConfig config, Pool defaultPool, Vertx vertx, Flyway defaultFlyway,
                  @ConfigProperty(name = "quarkus.datasource.username") Optional<String> defaultUsername,
                  @ConfigProperty(name = "quarkus.datasource.password") Optional<String> defaultPassword,
                  @ConfigProperty(name = "quarkus.datasource.reactive.max-size", defaultValue = "20") int maxSize) {
        this.layout = ShardLayout.of(config.shards());
        this.defaultPool = defaultPool;
        this.vertx = vertx;
        this.pools.put(ShardLayout.DEFAULT, defaultPool);
        int networkTimeoutMillis = Math.toIntExact(config.database().networkTimeout().toMillis());
        for (Map.Entry<String, LedgerConfig.Shard> shard : layout.extra().entrySet()) {
            String user = shard.getValue().username().or(() -> defaultUsername).orElse(null);
            String password = shard.getValue().password().or(() -> defaultPassword).orElse(null);
            String name = shard.getKey();
            Runnable migration = () -> migrate(name, ShardLayout.jdbcUrl(shard.getValue().url()), user, password,
                    defaultFlyway.getConfiguration());
            try {
                migration.run();
            } catch (RuntimeException down) {
                // a shard down at start is its own clients' trouble: they are answered 503 until it is migrated
                LOG.errorf("Shard %s could not be migrated at start (%s); its clients are answered 503 until it is, "
                        + "tried again every %d s", name, down.toString(), MIGRATION_RETRY.toSeconds());
                unmigrated.put(name, migration);
            }
            PgConnectOptions options = withNetworkTimeout(PgConnectOptions.fromUri(shard.getValue().url().trim()), networkTimeoutMillis)
                    .setCachePreparedStatements(true);
            if (user != null) {
                options.setUser(user);
            }
            if (password != null) {
                options.setPassword(password);
            }
            io.vertx.sqlclient.Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(maxSize))
                    .connectingTo(options).using(vertx.getDelegate()).build();
            pools.put(shard.getKey(), Pool.newInstance(pool));
            LOG.infof("Shard %s: %s on %s:%d/%s", shard.getKey(), clientsOf(shard.getValue()), options.getHost(),
                    options.getPort(), options.getDatabase());
        }
        if (!unmigrated.isEmpty()) {
            migrating = vertx.setPeriodic(MIGRATION_RETRY.toMillis(), id -> migrateAgain());
        }
        if (several()) {
            readPlacements().subscribe().with(ignored -> { });
            long every = Math.max(1, config.moves().refresh().toMillis());
            timer = vertx.setPeriodic(every, id -> readPlacements().subscribe().with(ignored -> { }));
        }
    }

    /** Whether the shard that holds {@code client}'s data was migrated (a shard down at start is not, until it is back). */
    public boolean migrated(String shard) {
        return !unmigrated.containsKey(shard);
    }

    /** The shards not migrated yet, on a worker thread (Flyway's JDBC blocks), each on its own. */
    private void migrateAgain() {
        unmigrated.forEach((name, migration) -> vertx.getDelegate().executeBlocking(() -> {
            migration.run();
            return null;
        }, false).onSuccess(done -> {
            unmigrated.remove(name);
            LOG.infof("Shard %s migrated: its clients are served", name);
            if (unmigrated.isEmpty()) {
                vertx.cancelTimer(migrating);
            }
        }).onFailure(down -> LOG.debugf("Shard %s still cannot be migrated (%s)", name, down.toString())));
    }

    /** Whether {@code client} is on the shard {@code default}, where Hibernate Reactive's session reads. */
    public boolean onDefault(String client) {
        return ShardLayout.DEFAULT.equals(shardOf(client));
    }

    /** The name of the shard that holds {@code client}'s data: where a move put it, or where the settings do. */
    public String shardOf(String client) {
        Map<String, String> moved = placements;
        String placed = moved.isEmpty() ? null : moved.get(client);
        return placed != null ? placed : layout.shardOf(client);
    }

    /** The shard the settings put {@code client} on, whatever a move did. */
    public String configuredShardOf(String client) {
        return layout.shardOf(client);
    }

    /** The shard named {@code name}'s pool, or none such. */
    public Optional<Pool> named(String name) {
        return Optional.ofNullable(pools.get(name));
    }

    /**
     * Reads where moves put clients ({@code client_placements} on the shard default) unless a read is under way
     * already; placements naming a shard this instance does not have are left out, with a warning (the settings'
     * shard then answers, and its fence refuses the client's writes there).
     */
    public Uni<Void> readPlacements() {
        if (!several() || !reading.compareAndSet(false, true)) {
            return Uni.createFrom().voidItem();
        }
        return defaultPool.withConnection(connection -> connection.query("SELECT client, shard FROM client_placements").execute())
                .invoke(rows -> {
                    Map<String, String> read = new HashMap<>();
                    rows.forEach(row -> {
                        String client = row.getString(0);
                        String shard = row.getString(1);
                        if (pools.containsKey(shard)) {
                            read.put(client, shard);
                        } else {
                            LOG.warnf("client_placements puts the client %s on the shard %s, which this instance has no "
                                    + "ledger.shards.%s.url for; left on the shard %s", client, shard, shard, layout.shardOf(client));
                        }
                    });
                    Map<String, String> before = placements;
                    placements = Map.copyOf(read);
                    read.forEach((client, shard) -> {
                        if (!shard.equals(before.getOrDefault(client, layout.shardOf(client)))) {
                            LOG.infof("Client %s is on the shard %s now (moved)", client, shard);
                        }
                    });
                })
                .replaceWithVoid()
                .onFailure().invoke(failure -> LOG.debugf("Could not read client_placements: %s", failure.toString()))
                .onFailure().recoverWithNull()
                .onTermination().invoke(() -> reading.set(false));
    }

    /** This instance's own move of {@code client} to {@code shard}, known before the next read. */
    public void placed(String client, String shard) {
        Map<String, String> moved = new HashMap<>(placements);
        moved.put(client, shard);
        placements = Map.copyOf(moved);
    }

    /** Every shard's pool by name, {@code default} first. */
    public Map<String, Pool> all() {
        return Collections.unmodifiableMap(pools);
    }

    /** Whether any shard besides {@code default} is set: then the background jobs name the shard in logs and metrics. */
    public boolean several() {
        return pools.size() > 1;
    }

    /**
     * Runs a background job ({@code job}: the shard's name and pool, answering when done) on every shard at once, so that
     * a shard down or slow holds up only its own run; with the default shard alone, just that one run.
     */
    public Uni<Void> each(BiFunction<String, Pool, Uni<Void>> job) {
        if (!several()) {
            return job.apply(ShardLayout.DEFAULT, defaultPool);
        }
        return Uni.join().all(pools.entrySet().stream().filter(shard -> migrated(shard.getKey()))
                        .map(shard -> job.apply(shard.getKey(), shard.getValue())).toList())
                .andCollectFailures().replaceWithVoid();
    }

    /**
     * The tags of a meter of {@code shard}'s (its statements, a background job's work there): {@code shard=<name>} when
     * there are several shards, none otherwise, so that one database's series stay as they always were.
     */
    public Tags tags(String shard) {
        return several() ? Tags.of("shard", shard) : Tags.empty();
    }

    /** A counter {@code name} of each shard, by shard name, {@link #tags tagged} by it: what a background job did there. */
    public Map<String, Counter> counters(MeterRegistry registry, String name, String description) {
        Map<String, Counter> counters = new HashMap<>();
        pools.keySet().forEach(shard -> counters.put(shard,
                Counter.builder(name).tags(tags(shard)).description(description).register(registry)));
        return Map.copyOf(counters);
    }

    /** For a job's log line: " on shard two" when there are several shards, nothing otherwise. */
    public String where(String shard) {
        return several() ? " on shard " + shard : "";
    }

    /**
     * The two network bounds of a connection that the pool settings have none for ({@code ledger.database.network-timeout}):
     * the connect timeout and TCP_USER_TIMEOUT (dev.ledger.dependency.PostgresPool says why), for every shard's pool.
     */
    public static PgConnectOptions withNetworkTimeout(PgConnectOptions connection, int millis) {
        connection.setConnectTimeout(millis).setTcpUserTimeout(millis);
        return connection;
    }

    @PreDestroy
    void close() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
        if (migrating >= 0) {
            vertx.cancelTimer(migrating);
        }
        pools.forEach((name, pool) -> {
            if (pool != defaultPool) {
                pool.closeAndForget();
            }
        });
    }

    private static void migrate(String name, String jdbcUrl, String user, String password, Configuration scripts) {
        // the default's scripts, found where Quarkus found them (its scanner also works in a native executable)
        Flyway flyway = Flyway.configure(scripts.getClassLoader())
                .locations(scripts.getLocations())
                .resourceProvider(scripts.getResourceProvider())
                .javaMigrationClassProvider(scripts.getJavaMigrationClassProvider())
                .dataSource(jdbcUrl, user, password)
                .load();
        int applied = flyway.migrate().migrationsExecuted;
        LOG.infof("Shard %s migrated (%d migrations applied)", name, applied);
    }

    private static String clientsOf(LedgerConfig.Shard shard) {
        return shard.clients().map(clients -> String.join(",", clients)).orElse("no client");
    }
}
