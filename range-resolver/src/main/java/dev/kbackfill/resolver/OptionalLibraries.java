package dev.kbackfill.resolver;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Libraries a process may start without and add once a lookup needs them. The command line starts a command for a
 * database or Kafka without the lake libraries (the Delta and Iceberg sinks, Hadoop's filesystems, Parquet): every
 * lookup of a service on the class path opens each jar on it, and with all of them that was 50-70 ms of a cron run's
 * start. The lookups those libraries serve (a shipped sink kind by name, object-store archives and checkpoints,
 * Parquet archive files) go through {@link #orAdded}: when they find nothing, the libraries are added and they look
 * again; the scan of every sink kind calls {@link #add()} first. Without a registered way to add them (a library
 * user's class path), nothing is added.
 */
public final class OptionalLibraries {

    private static final AtomicReference<Runnable> ADD = new AtomicReference<>();

    private OptionalLibraries() {
    }

    /** Registers what adds the libraries (the command line's, at start). */
    public static void addWith(Runnable add) {
        ADD.set(add);
    }

    /**
     * What {@code lookup} finds; where it finds nothing, what it finds once the libraries are added (if they were
     * added now). What adding throws is the lookup's failure.
     */
    public static <T> Optional<T> orAdded(Supplier<Optional<T>> lookup) {
        Optional<T> found = lookup.get();
        return found.isEmpty() && add() ? lookup.get() : found;
    }

    /**
     * Runs what adds the libraries, if one is registered and has not run: whether it ran now (then a lookup that
     * found nothing looks again). It runs once; what it throws (the libraries are missing, or cannot be added) is
     * the lookup's failure.
     */
    public static boolean add() {
        Runnable add = ADD.getAndSet(null);
        if (add == null) {
            return false;
        }
        add.run();
        return true;
    }
}
