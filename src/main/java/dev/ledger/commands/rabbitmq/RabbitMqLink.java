package dev.ledger.commands.rabbitmq;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.impl.nio.NioParams;
import dev.ledger.config.RabbitMqConnection;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The RabbitMQ door's connections: RabbitMQ's Java client in NIO mode, so that a publish or an acknowledgement
 * asked from an event loop is a frame queued for the client's one I/O thread, which writes what is queued together,
 * instead of a socket write on Vert.x' worker pool and the wake-ups around it (SmallRye's connector wraps the client's
 * blocking sockets, docs/performance.md "RabbitMQ: the door's own client"). Deliveries and confirms are handed over
 * on that I/O thread itself (no consumer thread pool): what runs there only queues work for an event loop or
 * completes a publish, and never waits.
 *
 * <p>Queued frames are bounded by what is in flight: a delivery is at most an outcome, a reply and an
 * acknowledgement, and at most {@code ledger.messaging.rabbitmq.prefetch} deliveries are unacknowledged, so the
 * write queue (10,000 frames) never fills and a caller never waits on it. Calls that wait for the broker's
 * answer (declarations, consuming, cancelling) run on {@link #thread()}, one thread of the door's own.
 */
@ApplicationScoped
public class RabbitMqLink {
    /** The first wait before connecting again; doubled up to {@link #MAX_RETRY}. */
    static final Duration FIRST_RETRY = Duration.ofMillis(250);
    static final Duration MAX_RETRY = Duration.ofSeconds(5);

    private final ConnectionFactory factory;
    private final String broker;
    private final ScheduledThreadPoolExecutor thread = new ScheduledThreadPoolExecutor(1, runnable -> {
        Thread t = new Thread(runnable, "ledger-commands-rabbitmq");
        t.setDaemon(true);
        return t;
    });

    public RabbitMqLink(RabbitMqConnection connection) {
        this.factory = connection.factory();
        this.broker = connection.describe();
        factory.useNio();
        // the client names its I/O thread rabbitmq-nio itself; a daemon, as the link's own thread
        factory.setNioParams(new NioParams().setNbIoThreads(1).setThreadFactory(runnable -> {
            Thread t = new Thread(runnable);
            t.setDaemon(true);
            return t;
        }));
        factory.setSharedExecutor(new OnTheCallingThread());
        factory.setConnectionTimeout(5_000);
        factory.setHandshakeTimeout(5_000);
        factory.setRequestedHeartbeat(15);
        thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** A new connection named {@code name} (as the broker's management lists it). */
    Connection connect(String name) throws IOException, TimeoutException {
        return factory.newConnection(name);
    }

    /** The thread for calls that wait for the broker. */
    ScheduledThreadPoolExecutor thread() {
        return thread;
    }

    /** The attempts to connect of one of the door's connections, each {@code attempt} run on {@link #thread()}. */
    Attempts attempts(Runnable attempt) {
        return new Attempts(attempt);
    }

    /**
     * One connection's attempts to connect: after a failure or a lost connection the next one comes after a wait that
     * grows with the failures in a row ({@link #FIRST_RETRY} doubled up to {@link #MAX_RETRY}); never two wait at once.
     */
    final class Attempts {
        private final Runnable attempt;
        // on the link's thread
        private boolean waiting;
        private int failures;

        private Attempts(Runnable attempt) {
            this.attempt = attempt;
        }

        /** The next attempt, after its wait, unless one is waiting already. */
        void again() {
            try {
                thread.execute(() -> {
                    if (!waiting) {
                        waiting = true;
                        long wait = Math.min(MAX_RETRY.toMillis(), FIRST_RETRY.toMillis() << Math.min(failures, 10));
                        thread.schedule(() -> {
                            waiting = false;
                            attempt.run();
                        }, wait, TimeUnit.MILLISECONDS);
                    }
                });
            } catch (RejectedExecutionException stopped) {
                // the service stops: no more attempts
            }
        }

        /** An attempt failed; answers whether it is the first in a row (worth a warning). */
        boolean failed() {
            return failures++ == 0;
        }

        /** An attempt connected; answers whether attempts had failed before it (worth saying it is back). */
        boolean connected() {
            boolean after = failures > 0;
            failures = 0;
            return after;
        }
    }

    /**
     * Has a channel the broker closes (a channel error: an exchange deleted under it, say) take its connection with it,
     * so that the connection's owner, who reconnects when it closes, does not keep a live connection with a dead channel.
     */
    void closesWithItsChannel(com.rabbitmq.client.Channel channel) {
        channel.addShutdownListener(cause -> {
            if (!cause.isHardError() && !cause.isInitiatedByApplication()) {
                try {
                    thread.execute(() -> channel.getConnection().abort(1_000));
                } catch (RejectedExecutionException stopped) {
                    // the service stops: its connections close with it
                }
            }
        });
    }

    /** Closes {@code channel}'s connection, waiting a second at most for the broker to agree. */
    static void close(com.rabbitmq.client.Channel channel) {
        try {
            channel.getConnection().close(1_000);
        } catch (IOException | RuntimeException e) {
            channel.getConnection().abort();
        }
    }

    String broker() {
        return broker;
    }

    @PreDestroy
    void stop() {
        thread.shutdownNow();
    }

    /** Runs each task on the thread that hands it over: the client's I/O thread, for deliveries and confirms. */
    private static final class OnTheCallingThread extends AbstractExecutorService {
        @Override
        public void execute(Runnable command) {
            command.run();
        }

        @Override
        public void shutdown() {
        }

        @Override
        public List<Runnable> shutdownNow() {
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }
}
