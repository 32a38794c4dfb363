package dev.kbackfill.sink.lake;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Work on a lake table's data files (probing, writing, copying) spread over a few threads, results in order. */
public final class ParallelFiles {

    /** Rows below which one writer does all: a Parquet file of fewer rows is not worth a thread. */
    public static final int ROWS_PER_WRITER = 50_000;

    private ParallelFiles() {
    }

    /** Runs tasks (reading or writing data files) on up to {@code threads} threads; their results in order. */
    public static <T> List<T> each(List<Callable<T>> tasks, int threads) throws IOException {
        List<T> results = new ArrayList<>();
        if (tasks.size() <= 1 || threads <= 1) {
            for (Callable<T> t : tasks) {
                try {
                    results.add(t.call());
                } catch (IOException | RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IOException(e);
                }
            }
            return results;
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, tasks.size()), r -> {
            Thread t = new Thread(r, "kbackfill-parquet");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<T>> parts = new ArrayList<>();
            for (Callable<T> t : tasks) {
                parts.add(pool.submit(t));
            }
            for (Future<T> part : parts) {
                results.add(part.get());
            }
            return results;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while reading or writing data files");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof java.io.UncheckedIOException u) {
                throw u.getCause();
            }
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(cause);
        } finally {
            pool.shutdownNow();
        }
    }

}
