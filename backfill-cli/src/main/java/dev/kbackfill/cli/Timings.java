package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code run --timings}: when each phase of a run ended, in milliseconds from the launcher's start (bin/kbackfill, which
 * says when it began) or else the JVM's, and how long it took, printed on stderr as the command ends. The phases are
 * what the command line sees of a run: the launcher to the JVM, the JVM's start to {@code main}, the options parsed and checked, the job opened (the sink's connection and schema), its state read,
 * the plan resolved (the topic's metadata, its offsets and any time lookups) and the run begun, the first records
 * read, the first batch committed, the run's end, and everything closed.
 */
final class Timings {

    /** When {@code main} was entered ({@code System.currentTimeMillis()}), or 0 outside {@link Kbackfill#main}. */
    static volatile long mainEntered;

    /** When bin/kbackfill began (its {@code EPOCHREALTIME}, passed on in this variable), where it launched the JVM. */
    static final String LAUNCHED_ENV = "KBACKFILL_LAUNCHED_AT";

    /** The JVM's start, in ms: what the phases' ends are counted from (the management bean only with --timings). */
    private final long jvmStart = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
    private final List<String> phases = new ArrayList<>();
    private final List<Long> at = new ArrayList<>();
    private long base = jvmStart;

    Timings() {
        String launched = System.getenv(LAUNCHED_ENV);
        if (launched != null && launched.matches("\\d+([.,]\\d+)?")) {
            base = Math.round(Double.parseDouble(launched.replace(',', '.')) * 1000);
            phases.add("bin/kbackfill to the JVM's start");
            at.add(jvmStart);
        }
        if (mainEntered > 0) {
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
        err.println("timings (ms from " + (base == jvmStart ? "the JVM's start" : "bin/kbackfill's start") + "):");
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
