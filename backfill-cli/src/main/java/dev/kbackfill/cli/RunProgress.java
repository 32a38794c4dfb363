package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.core.run.RunListener;

/**
 * The progress display on stderr: a live line on a terminal, a line every few seconds for logs, JSON lines for
 * programs, or nothing. It shows how far the reader has got (as records arrive) beside what is committed (after each
 * batch), so that a long first batch moves too; the counts on one line agree (the records read are those of the
 * offsets read). A ticker redraws it at least once a second on a terminal and every few seconds in a log while the
 * run waits (a slow broker, a long commit).
 */
final class RunProgress implements RunListener, AutoCloseable {

    enum Mode { auto, bar, plain, json, none }

    private final PrintWriter err;
    private final Mode mode;
    private final String job;
    private final long startedNanos = System.nanoTime();
    private final long every;
    private final ScheduledExecutorService ticker;
    private long lastPrinted;
    private boolean printed;
    private boolean finished;
    private long total = -1;
    private long read;
    private long done;
    private long records;
    private long bytes;
    private RunBeacon beacon;

    RunProgress(PrintWriter err, Mode mode, String job) {
        this.err = err;
        this.mode = mode == Mode.auto ? (System.console() != null ? Mode.bar : Mode.plain) : mode;
        this.job = job;
        this.every = this.mode == Mode.bar ? 200_000_000L : 5_000_000_000L;
        if (this.mode == Mode.none) {
            ticker = null;
        } else {
            ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "kbackfill-progress");
                t.setDaemon(true);
                return t;
            });
            long period = this.mode == Mode.bar ? 1_000 : 5_000;
            ticker.scheduleAtFixedRate(this::tick, period, period, TimeUnit.MILLISECONDS);
        }
    }

    /** Tells {@code kbackfill status} on this machine how far the run has got, from now on (in place of any before). */
    synchronized void beside(RunBeacon next) {
        if (beacon != null) {
            beacon.close();
        }
        beacon = next;
    }

    @Override
    public synchronized void onProgress(long done, long total, long records, long bytes) {
        this.total = total;
        this.done = Math.max(this.done, done);
        this.read = Math.max(this.read, done);
        this.records = Math.max(this.records, records);
        this.bytes = Math.max(this.bytes, bytes);
        tell();
        draw(done >= total);
    }

    @Override
    public synchronized void onRead(long read, long total, long records, long bytes) {
        this.total = total;
        this.read = Math.max(this.read, read);
        this.records = Math.max(this.records, records);
        this.bytes = Math.max(this.bytes, bytes);
        tell();
        draw(false);
    }

    private void tell() {
        if (beacon != null) {
            beacon.update(read, done, total, records);
        }
    }

    private synchronized void tick() {
        if (total >= 0) {
            draw(false);
        }
    }

    /** Stops the ticker and the run's beacon; a run that ended short of its plan leaves its last line as it was. */
    @Override
    public synchronized void close() {
        beside(null);
        if (ticker != null) {
            ticker.shutdownNow();
        }
        if (mode == Mode.bar && printed && !finished) {
            err.println();
            err.flush();
        }
        finished = true;
    }

    private void draw(boolean last) {
        long now = System.nanoTime();
        if (mode == Mode.none || finished || (!last && printed && now - lastPrinted < every)) {
            return;
        }
        lastPrinted = now;
        printed = true;
        double seconds = Math.max(1e-3, (now - startedNanos) / 1e9);
        double readPercent = percent(read);
        double donePercent = percent(done);
        double mbs = bytes / 1e6 / seconds;
        double rate = records / seconds;
        // the slower side decides: what is committed once anything is, before that what is read
        long eta = last ? 0 : done > 0 ? (long) ((total - done) * seconds / done)
                : read > 0 ? (long) ((total - read) * seconds / read) : 0;
        switch (mode) {
            case json -> err.printf(Locale.ROOT, "{\"job\":\"%s\",\"read\":%d,\"done\":%d,\"total\":%d,"
                    + "\"readPercent\":%.1f,\"percent\":%.1f,\"records\":%d,\"bytes\":%d,\"recordsPerSecond\":%.0f,"
                    + "\"etaSeconds\":%d}%n", job, read, done, total, readPercent, donePercent, records, bytes, rate, eta);
            case bar -> {
                int width = 30;
                int committed = (int) (width * donePercent / 100);
                int ahead = Math.max(0, (int) (width * readPercent / 100) - committed);
                err.printf(Locale.ROOT, "\r[%s%s%s] read %5.1f%%, committed %5.1f%%, %,d records %.1f MB/s ETA %s ",
                        "#".repeat(committed), "=".repeat(ahead), " ".repeat(width - committed - ahead), readPercent,
                        donePercent, records, mbs, clock(eta));
                if (last) {
                    err.println();
                }
            }
            default -> err.printf(Locale.ROOT, "%s: read %.1f%% (%d of %d offsets, %d records), committed %.1f%% (%d "
                    + "offsets), %.1f MB/s, ETA %s%n", job, readPercent, read, total, records, donePercent, done, mbs,
                    clock(eta));
        }
        err.flush();
        if (last) {
            finished = true;
            if (ticker != null) {
                ticker.shutdown();
            }
        }
    }

    private double percent(long offsets) {
        return total == 0 ? 100 : 100.0 * offsets / total;
    }

    private static String clock(long seconds) {
        return String.format(Locale.ROOT, "%d:%02d:%02d", seconds / 3600, (seconds / 60) % 60, seconds % 60);
    }
}
