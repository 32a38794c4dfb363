package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** One run of the command line in this JVM, with what it printed. */
record CliRun(int exitCode, String out, String err) {

    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Kbackfill.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new CliRun(code, out.toString(), err.toString());
    }

    /** The command line with {@code env} as its environment. */
    static CliRun withEnv(java.util.Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Kbackfill.execute(env, new PrintWriter(out), new PrintWriter(err), args);
        return new CliRun(code, out.toString(), err.toString());
    }

    /** {@code kbackfill run} against {@code broker}, without a progress display, then {@code args}. */
    static CliRun run(dev.kbackfill.embedded.EmbeddedKafka broker, String... args) {
        java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of("run", "--bootstrap-server",
                broker.bootstrapServers(), "--progress", "none"));
        all.addAll(java.util.List.of(args));
        return of(all.toArray(String[]::new));
    }

    /** {@code a} then {@code b}: a request's arguments with a run's own. */
    static String[] concat(String[] a, String... b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    /** The lines of stderr. */
    java.util.List<String> errLines() {
        return err.lines().toList();
    }
}
