package dev.kbackfill.testsink;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;

/**
 * {@code --sink rowsfile:PATH}: a sink kind that lives only in this test module, registered through
 * {@code META-INF/services/dev.kbackfill.core.sink.SinkFactory} as docs/architecture.md's "Adding a sink" says. It
 * proves that a new kind needs no change to core or the command line: {@code run}, {@code status} and
 * {@code verify} take it as they take the shipped kinds.
 *
 * <p>The destination is one file holding the rows and the jobs' states, replaced whole (write and rename) per
 * batch: a batch's rows and its progress are stored together or not at all.
 */
public final class RowsFileSinkFactory implements SinkFactory {

    static final String SCHEME = "rowsfile";

    @Override
    public String scheme() {
        return SCHEME;
    }

    @Override
    public List<String> forms() {
        return List.of("rowsfile:PATH");
    }

    /** Writes rows and stores its jobs: nothing more. */
    @Override
    public Set<Capability> capabilities() {
        return EnumSet.noneOf(Capability.class);
    }

    @Override
    public Sink create(SinkSettings settings) {
        check(settings);
        return new RowsFileSink(settings, new RowsFile(path(settings)));
    }

    @Override
    public JobStore createJobStore(SinkSettings settings) {
        return new RowsFileJobStore(new RowsFile(path(settings)));
    }

    private static java.nio.file.Path path(SinkSettings settings) {
        String path = settings.url().substring(SCHEME.length() + 1);
        if (path.isBlank()) {
            throw new SinkConfigException("invalid --sink '" + settings.url() + "': expected rowsfile:PATH");
        }
        return java.nio.file.Path.of(path).toAbsolutePath();
    }

    /** What this small sink does not do is refused, not ignored. */
    private static void check(SinkSettings settings) {
        if (settings.conflictMode() == ConflictMode.INSERT_ONLY) {
            throw new SinkConfigException("a rowsfile: sink writes newer-wins or overwrite, not insert-only");
        }
        if (settings.tombstoneMode() != TombstoneMode.DELETE) {
            throw new SinkConfigException("a rowsfile: sink deletes a key on its tombstone, --on-tombstone delete only");
        }
    }
}
