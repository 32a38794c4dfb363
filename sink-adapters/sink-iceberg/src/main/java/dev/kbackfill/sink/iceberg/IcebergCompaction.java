package dev.kbackfill.sink.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;

/**
 * {@code kbackfill compact --sink iceberg:...}: rewrites the data files that carry deletes (kbackfill's position
 * deletes, or anyone's) without their deleted rows, packs small files together, and drops the delete files that no
 * longer apply, in one {@code replace} snapshot whose new files keep the rewritten files' data sequence number, so
 * that readers see the same rows and streaming readers no new data. Rows are streamed file by file: memory does not
 * grow with the table.
 */
public final class IcebergCompaction {

    /**
     * What a compaction did.
     *
     * @param dataFilesBefore    the table's data files before
     * @param dataFilesRewritten the data files replaced
     * @param deleteFilesRemoved the delete files dropped
     * @param rows               the live rows copied
     * @param filesWritten       the data files written
     * @param snapshotId         the snapshot committed (0 when nothing was done)
     */
    public record Result(int dataFilesBefore, int dataFilesRewritten, int deleteFilesRemoved, long rows,
                         int filesWritten, long snapshotId) {
    }

    private IcebergCompaction() {
    }

    /** Compacts the table the settings' {@code iceberg:} URL names. */
    public static Result compact(SinkSettings settings) {
        IcebergTableRef ref = IcebergTableRef.parse(settings.url(), settings.table());
        try (IcebergTables tables = IcebergTables.open(ref, settings)) {
            Table t = tables.load().orElseThrow(() -> new SinkConfigException("no Iceberg table " + ref.shown()
                    + ": nothing to compact"));
            Snapshot base = t.currentSnapshot();
            if (base == null) {
                return new Result(0, 0, 0, 0, 0, 0);
            }
            IcebergFiles files = new IcebergFiles(t);
            long target = files.targetFileSize();
            List<FileScanTask> tasks = new ArrayList<>();
            try (CloseableIterable<FileScanTask> planned = t.newScan().useSnapshot(base.snapshotId()).planFiles()) {
                planned.forEach(tasks::add);
            }
            List<FileScanTask> withDeletes = tasks.stream().filter(k -> !k.deletes().isEmpty()).toList();
            List<FileScanTask> small = tasks.stream().filter(k -> k.deletes().isEmpty()
                    && k.file().fileSizeInBytes() < target * 3 / 4).toList();
            List<FileScanTask> rewrite = new ArrayList<>(withDeletes);
            if (small.size() > 1 || !withDeletes.isEmpty()) {
                rewrite.addAll(small);
            }
            if (rewrite.isEmpty() || (withDeletes.isEmpty() && rewrite.size() < 2)) {
                return new Result(tasks.size(), 0, 0, 0, 0, 0);
            }
            IcebergFiles.Copy copy = files.copyLive(rewrite);
            Set<DeleteFile> deletes = new LinkedHashSet<>();
            rewrite.forEach(k -> deletes.addAll(k.deletes()));
            RewriteFiles rw = t.newRewrite().validateFromSnapshot(base.snapshotId())
                    .dataSequenceNumber(base.sequenceNumber());
            rewrite.forEach(k -> rw.deleteFile(k.file()));
            deletes.forEach(rw::deleteFile);
            for (DataFile f : copy.files()) {
                rw.addFile(f);
            }
            rw.commit();
            t.refresh();
            return new Result(tasks.size(), rewrite.size(), deletes.size(), copy.rows(), copy.files().size(),
                    t.currentSnapshot().snapshotId());
        } catch (ValidationException e) {
            RuntimeException damaged = IcebergDamage.FORMAT.named(ref.shown(), e);
            if (damaged != e) {
                throw damaged;
            }
            throw new SinkException("another writer committed to the Iceberg table " + ref.shown() + " while it was "
                    + "being compacted (" + e.getMessage() + "); nothing was changed: compact again", e);
        } catch (IOException e) {
            throw IcebergDamage.FORMAT.named(ref.shown(), new UncheckedIOException(e));
        } catch (RuntimeException e) {
            throw IcebergDamage.FORMAT.named(ref.shown(), e);
        }
    }
}
