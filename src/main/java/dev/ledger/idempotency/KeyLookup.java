package dev.ledger.idempotency;

import dev.ledger.config.LedgerConfig;
import dev.ledger.dependency.Postgres;
import dev.ledger.problem.ProblemType;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * What became of a client's idempotency key ({@code GET /idempotency-keys/{key}}). A completed key is the durable
 * record's (PostgreSQL): its recorded answer's status and {@code Location}, derived from the stored outcome as a
 * replay renders them ({@link RecordedSuccess}), so the lookup works while the store is down. A key in flight has
 * no committed record yet; only the store knows it, with the lease's end. An expired record (not purged yet) is
 * no key, and another client's key is a different key (the hash takes the client).
 *
 * <p>The store is asked first, then PostgreSQL: a request that completes between the two looks is found completed,
 * one that reserves after the first look was not in flight when the lookup began, so every answer was true at some
 * moment of the lookup. When the store cannot answer, a key with no record is unknown (404, docs/api.md says why).
 */
@ApplicationScoped
public class KeyLookup {
    private static final Logger LOG = Logger.getLogger(KeyLookup.class);
    private static final String RECORD = "SELECT outcome, resource_id, request_path, created_at, expires_at "
            + "FROM idempotency_records WHERE client = $1 AND key_hash = $2 AND expires_at > now()";

    private final IdempotencyStore store;
    private final Postgres postgres;
    private final Duration lease;
    private final Map<String, RecordedSuccess> successes;

    public KeyLookup(IdempotencyStore store, Postgres postgres, LedgerConfig config, Instance<RecordedSuccess> successes) {
        this.store = store;
        this.postgres = postgres;
        this.lease = config.idempotency().lease();
        this.successes = successes.stream().collect(Collectors.toMap(RecordedSuccess::outcome, Function.identity()));
    }

    /** The key's state; null when {@code client} has no such key (unknown, expired, or never this client's). */
    public Uni<KeyState> find(String client, IdempotencyKey key) {
        byte[] hash = IdempotentRequest.keyHash(client, key);
        return store.inFlight(HexFormat.of().formatHex(hash))
                .onFailure().recoverWithItem(failure -> {
                    LOG.debugf("Store unavailable for a key's lookup (%s): PostgreSQL answers alone", failure.getClass().getSimpleName());
                    return null;
                })
                .chain(held -> postgres.query(client, RECORD, Tuple.of(client, Buffer.buffer(hash)))
                        .chain(rows -> rows.size() > 0 ? completed(client, rows.iterator().next())
                                : Uni.createFrom().item(held == null ? null : inFlight(held))));
    }

    private Uni<KeyState> completed(String client, Row record) {
        String outcome = record.getString("outcome");
        RecordedSuccess success = successes.get(outcome);
        int status = success != null ? success.status() : refusal(outcome).status();
        Uni<String> location = success != null ? success.location(client, record.getUUID("resource_id")) : Uni.createFrom().nullItem();
        return location.map(where -> new KeyState(true, record.getString("request_path"), status, where,
                record.getOffsetDateTime("created_at").toInstant(), record.getOffsetDateTime("expires_at").toInstant()));
    }

    private static ProblemType refusal(String outcome) {
        try {
            return ProblemType.valueOf(outcome);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("No answer known for the recorded outcome " + outcome, e);
        }
    }

    private KeyState inFlight(InFlightKey held) {
        // a reservation that kept no time (the previous version's) began a lease before its end
        Instant reservedAt = held.reservedAt() != null ? held.reservedAt() : held.leaseEnd().minus(lease);
        return new KeyState(false, held.path(), null, null, reservedAt, held.leaseEnd());
    }
}
