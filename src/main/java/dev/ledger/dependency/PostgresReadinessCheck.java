package dev.ledger.dependency;

import dev.ledger.config.LedgerConfig;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

import java.time.Duration;

/**
 * Readiness of PostgreSQL, the truth: the service cannot serve without it, so it is DOWN while one
 * {@code SELECT 1} on a connection of the request path's pool gets no answer within
 * {@code ledger.readiness.timeout} ({@link Deadline}, on the caller's event loop), and UP again with the
 * first answer, without a restart.
 *
 * <p>In place of Quarkus' two datasource checks ({@code quarkus.datasource.health.enabled=false}): the
 * reactive one waits up to 20 s for its query, blocking a worker thread, so that behind a partition (packets
 * lost, no reset) readiness gave no answer at all; the JDBC one checks Flyway's datasource, which only the
 * migration at start uses (a failed migration fails the start), and opens a blocking JDBC connection per
 * probe that nothing bounds below the driver's own timeouts.
 */
@Readiness
@ApplicationScoped
public class PostgresReadinessCheck implements AsyncHealthCheck {
    public static final String NAME = "PostgreSQL";

    private final Pool pool;
    private final Duration bound;

    public PostgresReadinessCheck(Pool pool, LedgerConfig config) {
        this.pool = pool;
        this.bound = config.readiness().timeout();
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        // through withConnection, as Postgres.query and for the same reason (vertx-sql-client#1706)
        return Deadline.within(bound, NAME, () -> pool.withConnection(connection -> connection.query("SELECT 1").execute()))
                .map(ignored -> HealthCheckResponse.named(NAME).up().withData("postgresql", "UP").build())
                .onFailure().recoverWithItem(failure -> HealthCheckResponse.named(NAME).down()
                        .withData("postgresql", "DOWN").withData("reason", String.valueOf(failure.getMessage())).build());
    }
}
