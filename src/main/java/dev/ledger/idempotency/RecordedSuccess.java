package dev.ledger.idempotency;

import io.smallrye.mutiny.Uni;

import java.util.UUID;

/**
 * A success that a feature's statement records under an outcome ({@code OPENED}, {@code APPLIED}), as the key's
 * lookup ({@link KeyLookup}) shows it: the status and {@code Location} its recorded answer had. Provided by the
 * feature the outcome belongs to, so that the engine knows no feature. A refusal needs none: it is recorded under
 * its problem type's name ({@code STALE_SEQUENCE} is {@code stale-sequence}'s 409) and had no {@code Location}.
 */
public interface RecordedSuccess {
    /** The outcome as the record stores it. */
    String outcome();

    /** The recorded answer's status. */
    int status();

    /**
     * The recorded answer's {@code Location} for the resource {@code client}'s request created ({@code resource_id}); null
     * when it had none (the default: a change of an existing resource).
     */
    default Uni<String> location(String client, UUID resourceId) {
        return Uni.createFrom().nullItem();
    }
}
