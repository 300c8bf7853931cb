package dev.ledger.dependency;

import io.micrometer.core.instrument.Counter;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

import java.util.Collection;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Deletes (or releases: {@code dev.ledger.transfer.HoldExpiry}) in bounded batches: each batch is one short DELETE of at most {@code batchSize} rows, and a
 * run stops when a batch comes back short or after {@code maxBatches}, so that a purge never holds many
 * locks or a long transaction; what is left waits for the next run.
 */
public final class BatchedDelete {
    private BatchedDelete() {
    }

    /** What one run did. */
    public record Result(long rows, int batches) {
    }

    /** Runs {@code batch} (answering the rows it deleted) until one deletes fewer than {@code batchSize}, at most {@code maxBatches} times. */
    public static Uni<Result> run(Supplier<Uni<Integer>> batch, int batchSize, int maxBatches) {
        return Multi.createBy().repeating()
                .<Integer>uni(batch::get)
                .whilst(deleted -> deleted == batchSize)
                .select().first(maxBatches)
                .collect().in(() -> new long[2], (acc, deleted) -> {
                    acc[0] += deleted;
                    acc[1]++;
                })
                .map(acc -> new Result(acc[0], (int) acc[1]));
    }

    /** {@code rows} a batch deleted, counted in {@code removed} (the job's counter of that shard); answers them. */
    public static int counted(int rows, Counter removed) {
        if (rows > 0) {
            removed.increment(rows);
        }
        return rows;
    }

    /** {@code run} on each of {@code shards} one after the other (a failure stops them); what they did, summed. */
    public static <S> Uni<Result> onEvery(Collection<S> shards, Function<S, Uni<Result>> run) {
        return Multi.createFrom().iterable(shards).onItem().<Result>transformToUniAndConcatenate(run::apply)
                .collect().in(() -> new long[2], (acc, result) -> {
                    acc[0] += result.rows();
                    acc[1] += result.batches();
                })
                .map(acc -> new Result(acc[0], (int) acc[1]));
    }

    /** A scheduled run of {@code purge}: logs what it removed, and a failure instead of failing (the next run tries again). */
    public static Uni<Void> logged(Uni<Result> purge, Logger log, String what) {
        return logged(purge, log, "Purged", "Purge", what);
    }

    /**
     * A scheduled run of {@code job}, which {@code done} (a past participle, "Released") {@code what} in batches:
     * logs what it did, and a failure instead of failing (the next run tries again).
     */
    public static Uni<Void> logged(Uni<Result> job, Logger log, String done, String name, String what) {
        return job
                .invoke(result -> {
                    if (result.rows() > 0) {
                        log.infof("%s %d %s in %d batches", done, result.rows(), what, result.batches());
                    }
                })
                .onFailure().recoverWithItem(failure -> {
                    log.warnf("%s of %s failed (%s); next run retries", name, what, failure.toString());
                    return new Result(0, 0);
                })
                .replaceWithVoid();
    }
}
