package dev.ledger.dependency;

import io.vertx.pgclient.PgException;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

/**
 * Tells a dependency that is unavailable (connection lost or refused, timed out, breaker open,
 * shutting down, overloaded, not accepting connections, a deadlock or serialization failure: worth
 * a retry, 503) from a bug (500).
 */
public final class DependencyFailures {
    private DependencyFailures() {
    }

    public static boolean isUnavailable(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof PgException pg) {
                String state = pg.getSqlState() == null ? "" : pg.getSqlState();
                // FATAL and PANIC end the session (for example "database does not allow connections",
                // 55000, answered to a new connection), so nothing of it committed; and by class:
                // 08 connection, 40 transaction rollback, 53 resources, 57 operator intervention, 58 system
                return "FATAL".equals(pg.getSeverity()) || "PANIC".equals(pg.getSeverity())
                        || state.startsWith("08") || state.startsWith("40") || state.startsWith("53")
                        || state.startsWith("57") || state.startsWith("58");
            }
            if (t instanceof IOException || t instanceof TimeoutException
                    || t instanceof io.vertx.sqlclient.ClosedConnectionException
                    || t instanceof dev.ledger.dependency.DependencyTimeoutException
                    || t instanceof io.github.resilience4j.circuitbreaker.CallNotPermittedException
                    || t instanceof io.vertx.core.VertxException
                    || t instanceof io.vertx.core.impl.NoStackTraceThrowable) {
                return true;
            }
        }
        return false;
    }
}
