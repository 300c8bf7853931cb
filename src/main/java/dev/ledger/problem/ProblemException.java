package dev.ledger.problem;

import java.util.Map;

/**
 * Ends a request with a problem response. Thrown for input errors and expected business
 * outcomes, never for faults; the one mapper in {@link ProblemMapper} renders it.
 */
public class ProblemException extends RuntimeException {
    private final transient Problem problem;
    private final transient Map<String, String> headers;

    public ProblemException(Problem problem) {
        this(problem, Map.of());
    }

    public ProblemException(Problem problem, Map<String, String> headers) {
        super(problem.getDetail(), null, false, false);
        this.problem = problem;
        this.headers = headers;
    }

    public ProblemException(ProblemType type, String detail) {
        this(new Problem(type, detail));
    }

    public Problem problem() {
        return problem;
    }

    public Map<String, String> headers() {
        return headers;
    }
}
