package dev.kbackfill.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;

import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.resolver.RequestException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kbackfill compact}: rewrite a Delta table's files into key-sorted ones, without a data change; or, with
 * {@code --forget-deletes-before}, prune the tombstone ledger of a Delta or JDBC target.
 */
@Command(name = "compact", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = {"Rewrite the data files of a Delta table into key-sorted ones in one commit marked dataChange=false "
                + "(streaming readers do not read the rows again); of an Iceberg table, the data files with deletes "
                + "without their deleted rows, small files packed, in one replace snapshot. Run it when no backfill "
                + "writes the table.",
                "With --forget-deletes-before TIME: forget the versions of keys whose deletes kbackfill recorded before "
                + "TIME (by when they were recorded, not by the tombstones' own timestamps; lake tables and JDBC tables; "
                + "nothing else is rewritten). After that, a replay of records older than those deletes can bring the "
                + "keys back: prune only what no replay will reach."},
        customSynopsis = "kbackfill compact --sink URL [OPTIONS]",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:compacted (or nothing to do)", "1:the sink failed", "2:bad input"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill compact --sink delta:/data/lake/orders",
                "  kbackfill compact --sink delta:/data/lake/orders \\",
                "      --forget-deletes-before 2024-01-01"})
final class CompactCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--sink", required = true, paramLabel = "URL", description = "The lake table (delta:PATH, "
            + "iceberg:...) to compact or prune, or a database (jdbc:...) whose --table's tombstone ledger to prune.")
    String sink;

    @Option(names = "--forget-deletes-before", paramLabel = "TIME",
            description = "Prune the tombstone ledger: a date, date-time, epoch millis or relative time (now-90d).")
    String forgetBefore;

    @Option(names = "--table", paramLabel = "TABLE", description = "With a JDBC --sink: the table whose ledger to prune.")
    String table;

    @Option(names = "--sink-user", paramLabel = "USER", description = "Database user; the password comes from $"
            + SinkOptions.PASSWORD_ENV + " or the URL.")
    String user;

    @Option(names = "--key-columns", paramLabel = "C1,C2",
            description = "The key columns (default: those recorded when kbackfill created the table).")
    String keyColumns;

    @Option(names = "--rows-per-file", paramLabel = "N", defaultValue = "1000000",
            description = "Rows per written file batch (default: ${DEFAULT-VALUE}).")
    int rowsPerFile;

    @picocli.CommandLine.Mixin
    LakeStorageOptions storage = new LakeStorageOptions();

    @Override
    public Integer call() throws IOException {
        if (forgetBefore != null) {
            return forget();
        }
        if (rowsPerFile < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --rows-per-file '" + rowsPerFile
                    + "': expected a whole number >= 1");
        }
        SinkFactory kind = SinkFactory.factoryFor(sink);
        String done = kind.compact(settings(), new SinkFactory.Compaction(
                Optional.ofNullable(keyColumns).map(SinkOptions::split), rowsPerFile));
        PrintWriter out = spec.commandLine().getOut();
        out.println(done);
        out.flush();
        return ExitCodes.OK;
    }

    /** The sink with its filesystem settings, checked as run checks them (no credentials on the command line). */
    private dev.kbackfill.core.sink.SinkSettings settings() {
        return storage.settings(sink, table == null ? "unused" : table, user, java.util.Map.of());
    }

    private int forget() {
        java.time.Instant before = forgetTime();
        SinkFactory kind = SinkFactory.factoryFor(sink);
        if (!kind.capabilities().contains(SinkFactory.Capability.KEEPS_LEDGER)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --sink '" + SinkFactory.redact(sink)
                    + "': --forget-deletes-before prunes a tombstone ledger, which " + kind.scheme() + ": sinks do not "
                    + "keep (those that do: " + String.join(", ", SinkFactory.formsWith(
                    SinkFactory.Capability.KEEPS_LEDGER)) + ")");
        }
        if (kind.capabilities().contains(SinkFactory.Capability.NAMED_TABLES) && table == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--forget-deletes-before with a "
                    + kind.scheme() + ": --sink needs --table: the ledger is the table's own (TABLE_kbackfill_deletes)");
        }
        dev.kbackfill.core.sink.SinkSettings settings = settings();
        try (dev.kbackfill.core.sink.Sink target = dev.kbackfill.core.sink.SinkFactory.forSettings(settings)) {
            target.jobStore().openForJobs();
            long n = target.maintenance().forgetDeletesBefore(before);
            PrintWriter out = spec.commandLine().getOut();
            out.printf("%s: forgot %d deleted key(s) recorded before %s%n", target.target(), n, before);
            out.flush();
        }
        return ExitCodes.OK;
    }

    private java.time.Instant forgetTime() {
        dev.kbackfill.resolver.Bound b;
        try {
            b = dev.kbackfill.resolver.BoundParser.parse("--forget-deletes-before", forgetBefore, java.time.ZoneOffset.UTC);
        } catch (RequestException e) {
            b = null; // the parser lists offset forms too; a time is wanted here
        }
        if (b instanceof dev.kbackfill.resolver.Bound.AtTime t) {
            return t.instant();
        }
        if (b instanceof dev.kbackfill.resolver.Bound.RelativeTime r) {
            return java.time.Instant.now().minus(r.ago());
        }
        throw new CommandLine.ParameterException(spec.commandLine(), "invalid --forget-deletes-before '" + forgetBefore
                + "': expected a time (2024-01-01, 2024-01-01T12:00:00Z, epoch millis, now-90d)");
    }
}
