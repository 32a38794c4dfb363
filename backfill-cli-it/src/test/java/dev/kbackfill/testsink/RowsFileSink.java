package dev.kbackfill.testsink;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.verify.TargetLookup;
import dev.kbackfill.core.verify.TargetRow;
import dev.kbackfill.core.verify.Values;
import dev.kbackfill.core.verify.Verification;
import dev.kbackfill.core.version.Held;
import dev.kbackfill.core.version.Version;

/**
 * A {@code rowsfile:} sink: keyed upserts under core's version rule, a delete kept as the key's version, each batch's
 * rows saved with its job's progress in one replacement of the file.
 */
final class RowsFileSink implements Sink {

    private final SinkSettings settings;
    private final RowsFile file;
    private final RowsFileJobStore jobs;

    RowsFileSink(SinkSettings settings, RowsFile file) {
        this.settings = settings;
        this.file = file;
        this.jobs = new RowsFileJobStore(file);
    }

    @Override
    public String target() {
        return jobs.store();
    }

    @Override
    public JobStore jobStore() {
        return jobs;
    }

    @Override
    public void open() {
        if (!file.exists() && !settings.createTable()) {
            throw new SinkConfigException(target() + " does not exist: pass --create-table to create it");
        }
    }

    @Override
    public boolean destinationExists() {
        return file.exists();
    }

    @Override
    public WriteResult write(WriteBatch batch) {
        RowsFile.Contents contents = file.read();
        JobState state = java.util.Optional.ofNullable(contents.jobs.get(batch.job())).map(JobStateJson::read)
                .orElseThrow(() -> new SinkException("job " + batch.job() + " is not in " + target()
                        + " any more: reset by another process"));
        long upserted = 0;
        long deleted = 0;
        Map<Integer, Long> keptOut = new HashMap<>();
        for (Change c : batch.changes()) {
            Version v = batch.version(c);
            RowsFile.Row held = contents.rows.get(RowsFile.keyText(c.key()));
            if (!replaces(v, held, batch)) {
                keptOut.merge(c.partition(), 1L, Long::sum);
                continue;
            }
            contents.rows.put(RowsFile.keyText(c.key()), new RowsFile.Row(new LinkedHashMap<>(c.key()),
                    c.isTombstone() ? new LinkedHashMap<>() : new LinkedHashMap<>(c.values()), batch.topic(),
                    v.partition(), v.offset(), v.timestamp(), v.logTime(), c.isTombstone()));
            if (c.isTombstone()) {
                deleted++;
            } else {
                upserted++;
            }
        }
        batch.recheckBeforeCommit();
        contents.jobs.put(batch.job(), JobStateJson.write(state.advancedTo(batch.nextOffsets())));
        file.save(contents);
        return new WriteResult(upserted, deleted, 0, keptOut);
    }

    /** Core's rule: overwrite replaces; newer-wins replaces only what holds an older version. */
    private boolean replaces(Version v, RowsFile.Row held, WriteBatch batch) {
        if (settings.conflictMode() == ConflictMode.OVERWRITE) {
            return true;
        }
        return v.replaces(held == null ? Held.NOTHING : Held.of(held.version()), batch.foreignRows());
    }

    /** Reads the file back for {@code verify}: the row of each key asked for, judged by core's value rules. */
    @Override
    public TargetLookup verifier() {
        Map<String, RowsFile.Row> rows = file.read().rows;
        return new TargetLookup() {
            @Override
            public Map<KeyIdentity, TargetRow> lookup(List<Change> expected, String topic,
                                                      Function<Change, Map<String, Object>> values) {
                Map<KeyIdentity, TargetRow> found = new HashMap<>();
                for (Change c : expected) {
                    RowsFile.Row row = rows.get(RowsFile.keyText(c.key()));
                    if (row != null) {
                        found.put(KeyIdentity.of(c.key()), row.deleted() ? TargetRow.deleted(row.version())
                                : TargetRow.live(row.version(), Verification.version(c, topic), row.values(),
                                Values.differing(values.apply(c), row.values())));
                    }
                }
                return found;
            }

            @Override
            public long rowsRead() {
                return rows.size();
            }
        };
    }

    @Override
    public void close() {
    }
}
