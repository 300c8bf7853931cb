package dev.ledger.dependency;

/**
 * Redis or Postgres gave no answer within its bound ({@link Deadline}). The Redis circuit breaker
 * counts it as a failure, and the problem mapper answers 503 {@code service-unavailable}.
 */
public class DependencyTimeoutException extends RuntimeException {
    public DependencyTimeoutException(String message) {
        super(message, null, false, false);
    }
}
