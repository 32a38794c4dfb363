package dev.kbackfill.core.run;

import java.util.Locale;

import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.resolver.BackfillRequest;

/** The lines a run ends with, the same wherever it ran (the command line, an engine's driver run on its own). */
public final class RunText {

    private RunText() {
    }

    /** {@code job J run N: wrote W changes from R records into T in S s (X records/s, Y MB/s)}. */
    public static String headline(RunSummary s, String target) {
        return String.format(Locale.ROOT, "job %s run %d: wrote %d changes from %d records into %s in %.1f s (%.0f "
                        + "records/s, %.1f MB/s)", s.job(), s.run(), s.written(), s.read(), target,
                s.duration().toNanos() / 1e9, s.recordsPerSecond(),
                s.bytes() / 1e6 / Math.max(1e-3, s.duration().toNanos() / 1e9));
    }

    /** {@code job J: run N already complete for REQUEST into T; nothing to do}. */
    public static String nothingToDo(String job, JobState state, BackfillRequest request, String target) {
        return "job " + job + ": run " + state.run() + " already complete for " + JobIdentity.describe(request)
                + " into " + target + "; nothing to do";
    }
}
