package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code run --timings}: when each phase of a run ended, in milliseconds from the process's start, and how long it
 * took, printed on stderr as the command ends. The phases are what the command line sees of a run: the JVM's start to
 * {@code main}, the options parsed and checked, the job opened (the sink's connection and schema), its state read,
 * the plan resolved (the topic's metadata, its offsets and any time lookups) and the run begun, the first records
 * read, the first batch committed, the run's end, and everything closed.
 */
final class Timings {

    /** When {@code main} was entered ({@code System.currentTimeMillis()}), or 0 outside {@link Kbackfill#main}. */
    static volatile long mainEntered;

    private final long processStart = ProcessHandle.current().info().startInstant()
            .map(java.time.Instant::toEpochMilli).orElse(0L);
    private final List<String> phases = new ArrayList<>();
    private final List<Long> at = new ArrayList<>();

    Timings() {
        if (mainEntered > 0 && processStart > 0) {
            phases.add("JVM start to main");
            at.add(mainEntered);
        }
    }

    /** The phase {@code phase} ended now; a phase marked again keeps its first end. */
    synchronized void mark(String phase) {
        if (!phases.contains(phase)) {
            phases.add(phase);
            at.add(System.currentTimeMillis());
        }
    }

    /** The table of phases, on {@code err}. */
    synchronized void print(PrintWriter err) {
        long base = processStart > 0 ? processStart : at.isEmpty() ? 0 : at.get(0);
        err.println("timings (ms from the process's start" + (processStart > 0 ? "" : ", unknown here: from the first "
                + "phase's end") + "):");
        err.println(String.format(java.util.Locale.ROOT, "  %-58s %7s %7s", "PHASE", "AT", "TOOK"));
        long before = base;
        for (int i = 0; i < phases.size(); i++) {
            long t = at.get(i);
            err.println(String.format(java.util.Locale.ROOT, "  %-58s %7d %7d", phases.get(i), t - base, t - before));
            before = t;
        }
        err.flush();
    }
}
