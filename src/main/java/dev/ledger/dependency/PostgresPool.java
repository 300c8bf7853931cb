package dev.ledger.dependency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.shard.Shards;
import io.quarkus.reactive.pg.client.PgPoolCreator;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgPool;
import io.vertx.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The reactive pool of PostgreSQL (Hibernate Reactive's and every statement's), as Quarkus makes it from the
 * {@code quarkus.datasource.*} settings, with two network settings of its connections that Quarkus has none
 * for, both {@code ledger.database.network-timeout}: the connect timeout (60 s by default) and
 * TCP_USER_TIMEOUT, how long data sent on a connection may stay unacknowledged before the kernel drops the
 * connection (by default, retransmissions go on for about 15 minutes).
 *
 * <p>Behind a partition that loses packets silently, every connection that took a statement waits for an
 * answer that cannot come, and keeps its place in the pool; at the heal it would resume only at its next
 * retransmission, whose interval doubles at each try (seconds after an outage of seconds, up to two minutes
 * after a long one), while new connections wait for places. With both bounds such connections are dropped
 * within the bound, the pool tries new ones, and once the network is back the first of them serves: requests
 * and readiness ({@code dev.ledger.dependency.PostgresReadinessCheck}) recover within about the bound. The pools of
 * the other shards ({@link Shards}) take the same two bounds.
 */
@ApplicationScoped
public class PostgresPool implements PgPoolCreator {
    private final int networkTimeoutMillis;

    public PostgresPool(LedgerConfig config) {
        this.networkTimeoutMillis = Math.toIntExact(config.database().networkTimeout().toMillis());
    }

    @Override
    @SuppressWarnings("deprecation") // Quarkus takes the pool as a PgPool, which only this factory still makes in Vert.x 4.5
    public Pool create(Input input) {
        for (PgConnectOptions connection : input.pgConnectOptionsList()) {
            Shards.withNetworkTimeout(connection, networkTimeoutMillis);
        }
        return PgPool.pool(input.vertx(), input.pgConnectOptionsList(), input.poolOptions());
    }
}
