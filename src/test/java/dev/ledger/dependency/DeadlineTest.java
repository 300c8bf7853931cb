package dev.ledger.dependency;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeadlineTest {
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    /** What a subscription on an event loop saw: the item or failure, the thread it came on, and whether on the caller's Vert.x context. */
    private record Seen(Object item, Throwable failure, String thread, String loop, boolean onCallersContext) {
    }

    private static Seen onEventLoop(Duration bound, Uni<String> call) throws Exception {
        Context context = vertx.getOrCreateContext();
        CompletableFuture<Seen> seen = new CompletableFuture<>();
        context.runOnContext(v -> {
            String loop = Thread.currentThread().getName();
            Deadline.within(bound, "Test", () -> call).subscribe().with(
                    item -> seen.complete(new Seen(item, null, Thread.currentThread().getName(), loop, Vertx.currentContext() == context)),
                    failure -> seen.complete(new Seen(null, failure, Thread.currentThread().getName(), loop, Vertx.currentContext() == context)));
        });
        return seen.get(10, TimeUnit.SECONDS);
    }

    @Test
    void failsACallThatNeverAnswersOnTheCallersEventLoop() throws Exception {
        Seen seen = onEventLoop(Duration.ofMillis(50), Uni.createFrom().nothing());

        DependencyTimeoutException timeout = assertInstanceOf(DependencyTimeoutException.class, seen.failure());
        assertTrue(timeout.getMessage().contains("Test gave no answer within 50 ms"), timeout.getMessage());
        assertEquals(seen.loop(), seen.thread(), "the timeout fires on the caller's own event loop");
        // and on its Vert.x context: what runs after a timeout (a Hibernate Reactive session closing, the request's
        // own steps) looks for the current context, and the loop's bare Netty executor has none
        assertTrue(seen.onCallersContext(), "the timeout failed the call outside the caller's Vert.x context");
    }

    @Test
    void passesAnAnswerThrough() throws Exception {
        Seen seen = onEventLoop(Duration.ofSeconds(5), Uni.createFrom().item("answer"));

        assertEquals("answer", seen.item());
        assertEquals(null, seen.failure());
        assertTrue(seen.onCallersContext(), "the answer came outside the caller's Vert.x context");
    }

    @Test
    void subscribesToTheCallOnlyWhenSubscribed() {
        AtomicInteger calls = new AtomicInteger();
        Uni<String> bounded = Deadline.within(Duration.ofSeconds(5), "Test", () -> {
            calls.incrementAndGet();
            return Uni.createFrom().item("x");
        });
        assertEquals(0, calls.get());

        assertEquals("x", bounded.await().atMost(Duration.ofSeconds(5)));
        assertEquals(1, calls.get());
    }

    @Test
    void timesOutOffTheEventLoopToo() {
        Uni<String> bounded = Deadline.within(Duration.ofMillis(50), "Test", () -> Uni.createFrom().nothing());

        Throwable failure = bounded.onItemOrFailure().transform((item, f) -> f).await().atMost(Duration.ofSeconds(5));
        assertInstanceOf(DependencyTimeoutException.class, failure);
    }
}
