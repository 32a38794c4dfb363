package dev.kbackfill.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;

import dev.kbackfill.sink.delta.DeltaCompaction;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code kbackfill compact}: rewrite a Delta table's files into key-sorted ones, without a data change. */
@Command(name = "compact", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Rewrite the data files of a Delta table into key-sorted ones in one commit marked dataChange=false "
                + "(streaming readers do not read the rows again). Run it when no backfill writes the table.")
final class CompactCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--sink", required = true, paramLabel = "delta:PATH", description = "The Delta table.")
    String sink;

    @Option(names = "--key-columns", paramLabel = "C1,C2",
            description = "The key columns (default: those recorded when kbackfill created the table).")
    String keyColumns;

    @Option(names = "--rows-per-file", paramLabel = "N", defaultValue = "1000000",
            description = "Rows per written file batch (default: ${DEFAULT-VALUE}).")
    int rowsPerFile;

    @Override
    public Integer call() throws IOException {
        if (!sink.startsWith("delta:")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --sink '" + sink
                    + "': compact works on Delta tables: delta:PATH");
        }
        if (rowsPerFile < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "invalid --rows-per-file '" + rowsPerFile
                    + "': expected a whole number >= 1");
        }
        PrintWriter out = spec.commandLine().getOut();
        DeltaCompaction.Result r = DeltaCompaction.compact(sink.substring("delta:".length()),
                Optional.ofNullable(keyColumns).map(SinkOptions::split), rowsPerFile);
        if (r.filesRewritten() == 0) {
            out.printf("%s: %d data file(s), nothing to compact%n", sink, r.filesBefore());
        } else {
            out.printf("%s: rewrote %d files (%d rows) into %d key-sorted file(s), version %d, dataChange=false%n",
                    sink, r.filesRewritten(), r.rows(), r.filesWritten(), r.version());
        }
        out.flush();
        return ExitCodes.OK;
    }
}
