package dev.ledger.failure;

import dev.ledger.dependency.Breaker;
import io.smallrye.faulttolerance.api.CircuitBreakerState;
import io.smallrye.mutiny.Uni;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import static org.awaitility.Awaitility.await;

/**
 * A breaker held open by the test, as an outage would: calls that fail are made through it until it
 * opens, and again every few milliseconds, so that the trial it lets through once its delay is over is
 * most likely one of these and fails too. {@link #close} stops, and resets the breaker.
 */
final class HeldOpen implements AutoCloseable {
    private final Breaker breaker;
    private final Thread keeper;
    private volatile boolean holding = true;

    private HeldOpen(Breaker breaker) {
        this.breaker = breaker;
        this.keeper = new Thread(() -> {
            while (holding) {
                try {
                    breaker.call(() -> Uni.createFrom().failure(new IOException("held open by the test")))
                            .await().atMost(Duration.ofSeconds(5));
                } catch (RuntimeException refusedOrFailed) {
                    // both are what this thread is for
                }
                LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
            }
        }, "held-open-" + breaker.name());
        keeper.setDaemon(true);
        keeper.start();
    }

    /** Opens {@code breaker} and keeps it open; answers once it is. */
    static HeldOpen hold(Breaker breaker) {
        HeldOpen held = new HeldOpen(breaker);
        await().atMost(Duration.ofSeconds(10)).until(() -> breaker.state() == CircuitBreakerState.OPEN);
        return held;
    }

    @Override
    public void close() throws InterruptedException {
        holding = false;
        keeper.join();
        breaker.reset();
    }
}
