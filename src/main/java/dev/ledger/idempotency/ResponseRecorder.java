package dev.ledger.idempotency;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.problem.Problem;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Renders an answer to the exact bytes that are sent and recorded for replay. Rendering is a
 * function of immutable data only, so an answer rebuilt from Postgres equals the original.
 */
@ApplicationScoped
public class ResponseRecorder {
    public static final String JSON = "application/json";

    private final ObjectMapper mapper;

    public ResponseRecorder(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    public RecordedResponse created(Object body, String location) {
        return new RecordedResponse(201, JSON, location, bytes(body));
    }

    /** A 200 with {@code body}: a change of an existing resource (a transfer's post or void). */
    public RecordedResponse ok(Object body) {
        return new RecordedResponse(200, JSON, null, bytes(body));
    }

    public RecordedResponse problem(Problem problem) {
        return new RecordedResponse(problem.getStatus(), Problem.MEDIA_TYPE, null, bytes(problem));
    }

    private byte[] bytes(Object body) {
        try {
            return mapper.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Cannot render " + body.getClass().getSimpleName(), e);
        }
    }
}
