package dev.kbackfill.sink.delta;

import java.util.Optional;

import io.delta.kernel.data.Row;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.actions.AddFile;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.utils.FileStatus;

/**
 * The only place that touches Delta Kernel's internal classes ({@code io.delta.kernel.internal}): removing a file
 * (copy-on-write), reading a scan file's add action and stats, and wrapping a list as a Kernel iterator have no
 * public API in Kernel 4.4.
 */
final class KernelInternals {

    private KernelInternals() {
    }

    /** A scan file's add action. */
    static Row addOf(Row scanFile) {
        return scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL);
    }

    /** Where a scan file lives, with its size and modification time. */
    static FileStatus status(Row scanFile) {
        return InternalScanFileUtils.getAddFileStatus(scanFile);
    }

    /** A scan file's statistics JSON ({@code minValues}, {@code maxValues}, {@code numRecords}), if written. */
    static Optional<String> statsJson(Row scanFile) {
        return new AddFile(addOf(scanFile)).getStatsJson();
    }

    /** The schema to read a scan's data files with (physical column names under column mapping). */
    static io.delta.kernel.types.StructType physicalReadSchema(Row scanState) {
        return io.delta.kernel.internal.data.ScanStateRow.getPhysicalDataReadSchema(scanState);
    }

    /** A Kernel iterator over a list. */
    static <T> io.delta.kernel.utils.CloseableIterator<T> iterator(java.util.List<T> items) {
        return io.delta.kernel.internal.util.Utils.toCloseableIterator(items.iterator());
    }

    /** The commit action removing a scan file's data file (the data changes: {@code dataChange=true}). */
    static Row removeAction(Row scanFile, boolean dataChange) {
        return SingleAction.createRemoveFileSingleAction(new AddFile(addOf(scanFile)).toRemoveFileRow(dataChange,
                Optional.empty()));
    }

    /** The names of the table's active domains (Kernel has no public listing). */
    static java.util.Set<String> domains(io.delta.kernel.Snapshot snapshot) {
        return ((io.delta.kernel.internal.SnapshotImpl) snapshot).getActiveDomainMetadataMap().keySet();
    }
}
