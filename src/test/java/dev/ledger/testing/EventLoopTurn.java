package dev.ledger.testing;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Calls made together in one turn of one Vert.x event loop, as a loaded service makes them. */
public final class EventLoopTurn {
    private EventLoopTurn() {
    }

    /** Subscribes every call in one turn of one event loop, and waits for all of their items. */
    public static List<Object> inOneTurn(Vertx vertx, Duration wait, List<Supplier<Uni<?>>> calls) throws Exception {
        Context context = vertx.getOrCreateContext();
        assertTrue(context.isEventLoopContext());
        CompletableFuture<List<Object>> all = new CompletableFuture<>();
        context.runOnContext(ignored -> {
            List<Uni<Object>> unis = new ArrayList<>();
            calls.forEach(call -> unis.add(call.get().onItem().transform(Object.class::cast)));
            Uni.join().all(unis).andFailFast().subscribe().with(all::complete, all::completeExceptionally);
        });
        return all.get(wait.toSeconds(), TimeUnit.SECONDS);
    }
}
