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

    /** The lines of stderr. */
    java.util.List<String> errLines() {
        return err.lines().toList();
    }
}
