package dev.ledger.redis;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.ledger.idempotency.IdempotencyKey;
import dev.ledger.idempotency.IdempotencyStore;
import dev.ledger.idempotency.IdempotentRequest;
import dev.ledger.idempotency.RecordedResponse;
import dev.ledger.idempotency.Reservation;
import dev.ledger.testing.EventLoopTurn;
import io.quarkus.redis.datasource.RedisDataSource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pipelining of the idempotency store's Redis commands, against the real (test) Redis: what
 * one event-loop turn issues goes as one write, every caller gets its own reply, and a batch that
 * fails is resent command by command without turning a caller's own reservation against it.
 */
@QuarkusTest
class RedisPipelineTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Inject
    IdempotencyStore store;

    @Inject
    RedisPipeline pipeline;

    @Inject
    RedisDataSource redis;

    @Inject
    Vertx vertx;

    private static IdempotentRequest request() {
        return IdempotentRequest.of("pipeline", new IdempotencyKey(UUID.randomUUID().toString()), "POST", "/p",
                JsonNodeFactory.instance.objectNode());
    }

    private static RecordedResponse answer(int i) {
        return new RecordedResponse(201, "application/json", "/p/" + i,
                ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
    }

    private List<Object> inOneTurn(List<Supplier<Uni<?>>> calls) throws Exception {
        return EventLoopTurn.inOneTurn(vertx, WAIT, calls);
    }

    /** Redis' count of the socket reads it has processed, server-wide (INFO stats). */
    private long redisReadsProcessed() {
        String stats = redis.execute("INFO", "stats").toString();
        return stats.lines().filter(line -> line.startsWith("total_reads_processed:"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf(':') + 1).trim()))
                .findFirst().orElseThrow();
    }

    @Test
    void oneTurnsCommandsShareOneWriteAndEachCallerGetsItsOwnReply() throws Exception {
        int n = 20;
        List<IdempotentRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            IdempotentRequest request = request();
            requests.add(request);
            if (i % 2 == 0) { // every other key already holds an answer of its own
                assertTrue(store.complete(request, "earlier", answer(i)).await().atMost(WAIT));
            }
        }
        // the script cached in Redis (another test flushes it), so that no reply is NOSCRIPT
        store.reserve(request(), "warm-up").await().atMost(WAIT);
        long writes = pipeline.sendsMade();
        long commands = pipeline.callsSent();

        List<Supplier<Uni<?>>> calls = new ArrayList<>();
        for (IdempotentRequest request : requests) {
            calls.add(() -> store.reserve(request, "owner-" + RedisIdempotencyStore.key(request)));
        }
        long redisReads = redisReadsProcessed();
        List<Object> replies = inOneTurn(calls);

        // on the wire too: Redis read the turn's commands in one socket read or so (plus this INFO's)
        long readEvents = redisReadsProcessed() - redisReads;
        assertTrue(readEvents <= 3, "Redis read events for " + n + " commands: " + readEvents);
        assertEquals(1, pipeline.sendsMade() - writes, "one write for the whole turn");
        assertEquals(n, pipeline.callsSent() - commands);
        for (int i = 0; i < n; i++) {
            IdempotentRequest request = requests.get(i);
            if (i % 2 == 0) {
                assertEquals(answer(i), assertInstanceOf(Reservation.Completed.class, replies.get(i)).response());
            } else {
                assertInstanceOf(Reservation.Acquired.class, replies.get(i));
                assertEquals("owner-" + RedisIdempotencyStore.key(request), redis.hash(String.class).hget(RedisIdempotencyStore.key(request), "owner"));
            }
        }
    }

    @Test
    void eachReplyArrivesOnItsCallersOwnContext() throws Exception {
        store.reserve(request(), "warm-up").await().atMost(WAIT);
        ContextInternal loop = (ContextInternal) vertx.getOrCreateContext();
        int n = 5;
        List<ContextInternal> callers = new ArrayList<>();
        List<CompletableFuture<Context>> seen = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            callers.add(loop.duplicate()); // one per request, as Vert.x gives each HTTP request
            seen.add(new CompletableFuture<>());
        }
        long writes = pipeline.sendsMade();
        loop.runOnContext(ignored -> { // one turn; each call made on its own request's context
            for (int i = 0; i < n; i++) {
                CompletableFuture<Context> where = seen.get(i);
                callers.get(i).emit(none -> store.reserve(request(), "C").subscribe()
                        .with(reply -> where.complete(Vertx.currentContext()), where::completeExceptionally));
            }
        });
        for (int i = 0; i < n; i++) {
            assertSame(callers.get(i), seen.get(i).get(WAIT.toSeconds(), TimeUnit.SECONDS), "reply " + i);
        }
        assertEquals(1, pipeline.sendsMade() - writes, "one write for the whole turn");
    }

    @Test
    void aFailedBatchIsResentCommandByCommandAndTheReservationStaysTheCallers() throws Exception {
        IdempotentRequest reserved = request();
        IdempotentRequest completed = request();
        // Redis lost its scripts, and only reserve.lua is back (run once, it is sent whole): in the
        // batch below the reservation runs, the completion fails with NOSCRIPT, and so the batch fails.
        redis.execute("SCRIPT", "FLUSH");
        assertInstanceOf(Reservation.Acquired.class, store.reserve(request(), "warm-up").await().atMost(WAIT));
        long writes = pipeline.sendsMade();

        List<Object> replies = inOneTurn(List.of(
                () -> store.reserve(reserved, "A"),
                () -> store.complete(completed, "B", answer(1))));

        // resent alone: the reservation is still A's, not "in progress" against A itself
        assertInstanceOf(Reservation.Acquired.class, replies.get(0));
        assertEquals(Boolean.TRUE, replies.get(1));
        assertTrue(pipeline.sendsMade() - writes >= 3, "the batch, then each command alone");
        assertEquals("A", redis.hash(String.class).hget(RedisIdempotencyStore.key(reserved), "owner"));
        assertEquals("PROCESSING", redis.hash(String.class).hget(RedisIdempotencyStore.key(reserved), "state"));
        assertEquals(answer(1), assertInstanceOf(Reservation.Completed.class,
                store.reserve(completed, "C").await().atMost(WAIT)).response());
    }

    @Test
    void aCommandWhoseCallerGaveUpBeforeTheWriteIsNotSent() throws Exception {
        IdempotentRequest abandoned = request();
        IdempotentRequest kept = request();
        Context context = vertx.getOrCreateContext();
        CompletableFuture<Reservation> keptReply = new CompletableFuture<>();
        context.runOnContext(ignored -> {
            Cancellable call = store.reserve(abandoned, "A").subscribe().with(reply -> {
            });
            call.cancel();
            store.reserve(kept, "B").subscribe().with(keptReply::complete, keptReply::completeExceptionally);
        });

        assertInstanceOf(Reservation.Acquired.class, keptReply.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        // the kept command's reply came after the turn's write: the abandoned one was not in it
        assertNull(redis.hash(String.class).hget(RedisIdempotencyStore.key(abandoned), "state"));
    }
}
