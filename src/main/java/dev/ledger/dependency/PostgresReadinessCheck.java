package dev.ledger.dependency;

import dev.ledger.config.LedgerConfig;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import dev.ledger.shard.Shards;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import java.time.Duration;
import java.util.List;

/**
 * Readiness of PostgreSQL, the truth: the service cannot serve without it, so it is DOWN while one
 * {@code SELECT 1} on a connection of the request path's pool gets no answer within
 * {@code ledger.readiness.timeout} ({@link Deadline}, on the caller's event loop), and UP again with the
 * first answer, without a restart. With several shards ({@link Shards}) it is UP while any of them answers.
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
    private static final String UP = "UP";
    private static final String DOWN = "DOWN";

    private final Shards shards;
    private final Duration bound;

    public PostgresReadinessCheck(Shards shards, LedgerConfig config) {
        this.shards = shards;
        this.bound = config.readiness().timeout();
    }

    /**
     * UP while any shard answers (a shard that does not answers 503 to its own clients alone); the data say each
     * shard's state: {@code postgresql} the default shard's, {@code shard <name>} each other's.
     */
    @Override
    public Uni<HealthCheckResponse> call() {
        List<String> names = List.copyOf(shards.all().keySet());
        List<Uni<String>> states = names.stream().map(name -> shards.migrated(name) ? state(shards.all().get(name))
                : Uni.createFrom().item("not migrated yet: down at start")).toList();
        return Uni.join().all(states).andFailFast().map(answers -> {
            HealthCheckResponseBuilder response = HealthCheckResponse.named(NAME).status(answers.stream().anyMatch(UP::equals));
            for (int i = 0; i < names.size(); i++) {
                String state = answers.get(i);
                boolean up = UP.equals(state);
                if (i == 0) {
                    response.withData("postgresql", up ? UP : DOWN);
                    if (!up) {
                        response.withData("reason", state);
                    }
                } else {
                    response.withData("shard " + names.get(i), up ? UP : DOWN + " (" + state + ")");
                }
            }
            return response.build();
        });
    }

    /** UP, or why not. */
    private Uni<String> state(Pool pool) {
        // through withConnection, as Postgres.query and for the same reason (vertx-sql-client#1706)
        return Deadline.within(bound, NAME, () -> pool.withConnection(connection -> connection.query("SELECT 1").execute()))
                .map(ignored -> UP)
                .onFailure().recoverWithItem(failure -> String.valueOf(failure.getMessage()));
    }
}
