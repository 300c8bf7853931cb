package dev.ledger.problem;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.quarkus.runtime.annotations.RegisterForReflection;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An RFC 9457 problem body: {@code type}, {@code title}, {@code status}, {@code detail}, then the
 * extension members a client needs to act (for example {@code balance}, {@code lastSequence}).
 */
@RegisterForReflection
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"type", "title", "status", "detail"})
public final class Problem {
    public static final String MEDIA_TYPE = "application/problem+json";

    private final ProblemType type;
    private final String detail;
    private final Map<String, Object> extensions = new LinkedHashMap<>();

    public Problem(ProblemType type, String detail) {
        this.type = type;
        this.detail = detail;
    }

    public Problem with(String member, Object value) {
        extensions.put(member, value);
        return this;
    }

    public String getType() {
        return type.uri();
    }

    public String getTitle() {
        return type.title();
    }

    public int getStatus() {
        return type.status();
    }

    public String getDetail() {
        return detail;
    }

    @JsonAnyGetter
    public Map<String, Object> getExtensions() {
        return extensions;
    }

    public ProblemType type() {
        return type;
    }
}
