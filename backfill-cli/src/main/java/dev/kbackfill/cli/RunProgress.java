package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.Locale;

import dev.kbackfill.core.run.RunListener;

/**
 * The progress display on stderr: a live line on a terminal, a line every few seconds for logs, JSON lines for
 * programs, or nothing.
 */
final class RunProgress implements RunListener {

    enum Mode { auto, bar, plain, json, none }

    private final PrintWriter err;
    private final Mode mode;
    private final String job;
    private final long startedNanos = System.nanoTime();
    private long lastPrinted;

    RunProgress(PrintWriter err, Mode mode, String job) {
        this.err = err;
        this.mode = mode == Mode.auto ? (System.console() != null ? Mode.bar : Mode.plain) : mode;
        this.job = job;
    }

    @Override
    public void onProgress(long done, long total, long records, long bytes) {
        long now = System.nanoTime();
        boolean last = done >= total;
        long every = mode == Mode.bar ? 200_000_000L : 5_000_000_000L;
        if (mode == Mode.none || (!last && now - lastPrinted < every)) {
            return;
        }
        lastPrinted = now;
        double seconds = Math.max(1e-3, (now - startedNanos) / 1e9);
        double percent = total == 0 ? 100 : 100.0 * done / total;
        double mbs = bytes / 1e6 / seconds;
        double rate = records / seconds;
        long eta = done == 0 || last ? 0 : (long) ((total - done) * seconds / done);
        switch (mode) {
            case json -> err.printf(Locale.ROOT, "{\"job\":\"%s\",\"done\":%d,\"total\":%d,\"percent\":%.1f,"
                    + "\"records\":%d,\"bytes\":%d,\"recordsPerSecond\":%.0f,\"etaSeconds\":%d}%n",
                    job, done, total, percent, records, bytes, rate, eta);
            case bar -> {
                int width = 30;
                int filled = (int) (width * percent / 100);
                err.printf(Locale.ROOT, "\r[%s%s] %5.1f%% %,d records %.1f MB/s ETA %s ", "#".repeat(filled),
                        " ".repeat(width - filled), percent, records, mbs, clock(eta));
                if (last) {
                    err.println();
                }
            }
            default -> err.printf(Locale.ROOT, "%s: %.1f%% (%d of %d offsets), %d records, %.1f MB/s, ETA %s%n", job,
                    percent, done, total, records, mbs, clock(eta));
        }
        err.flush();
    }

    private static String clock(long seconds) {
        return String.format(Locale.ROOT, "%d:%02d:%02d", seconds / 3600, (seconds / 60) % 60, seconds % 60);
    }
}
