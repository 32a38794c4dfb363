package dev.kbackfill.core.run;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * What a caller holds of the runs it starts, for whoever must stop them from outside (the command line's signal
 * handler): whether a run is under way, and what a stop must reach besides the runs of this process (an engine's
 * application in a process of its own). A stop asks every run to end at its next batch boundary
 * ({@link StopRequest}) and then performs the registered actions.
 */
public final class RunHandle {

    private final AtomicInteger running = new AtomicInteger();
    private final Set<Runnable> onStop = ConcurrentHashMap.newKeySet();

    /** Runs {@code run} as a run under way: a stop meanwhile waits for its safe point. */
    public <T> T during(Supplier<T> run) {
        running.incrementAndGet();
        try {
            return run.get();
        } finally {
            running.decrementAndGet();
        }
    }

    /** Whether a run is under way. */
    public boolean running() {
        return running.get() > 0;
    }

    /**
     * Registers what a stop must also do until the returned registration is closed: an engine that runs the job
     * elsewhere passes the stop on (it destroys its application, whose committed work stays).
     */
    public Registration onStop(Runnable action) {
        onStop.add(action);
        return () -> onStop.remove(action);
    }

    /**
     * Asks the runs to stop at their next safe point, {@code why} naming the cause (SIGTERM), and performs the
     * registered actions.
     *
     * @return whether a run was under way (if not, nothing waits for a safe point)
     */
    public boolean stop(String why) {
        StopRequest.request(why);
        onStop.forEach(Runnable::run);
        return running();
    }

    /** An action registered with {@link #onStop}; closing it unregisters it. */
    @FunctionalInterface
    public interface Registration extends AutoCloseable {
        @Override
        void close();
    }
}
