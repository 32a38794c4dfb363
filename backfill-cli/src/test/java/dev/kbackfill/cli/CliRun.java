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

    /** {@code kbackfill run} against {@code broker}, without a progress display, then {@code args}. */
    static CliRun run(dev.kbackfill.embedded.EmbeddedKafka broker, String... args) {
        java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of("run", "--bootstrap-server",
                broker.bootstrapServers(), "--progress", "none"));
        all.addAll(java.util.List.of(args));
        return of(all.toArray(String[]::new));
    }

    /** The lines of stderr. */
    java.util.List<String> errLines() {
        return err.lines().toList();
    }
}
