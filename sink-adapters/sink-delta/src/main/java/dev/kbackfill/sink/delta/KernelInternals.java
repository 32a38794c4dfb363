package dev.kbackfill.sink.delta;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import io.delta.kernel.data.Row;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.actions.AddFile;
import io.delta.kernel.internal.actions.DeletionVectorDescriptor;
import io.delta.kernel.internal.actions.SingleAction;
import io.delta.kernel.internal.data.GenericRow;
import io.delta.kernel.internal.deletionvectors.DeletionVectorUtils;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.FileStatus;

/**
 * The only place that touches Delta Kernel's internal classes ({@code io.delta.kernel.internal}): removing a file
 * (copy-on-write), re-adding it with a deletion vector, reading a scan file's add action, stats and deletion vector,
 * wrapping a list as a Kernel iterator, and reading a schema string have no public API in Kernel 4.4 (it reads
 * deletion vectors but does not write them).
 */
final class KernelInternals {

    private KernelInternals() {
    }

    /** A table schema written as the Delta protocol writes one (its {@code schemaString}). */
    static io.delta.kernel.types.StructType schema(String json) {
        return io.delta.kernel.internal.types.DataTypeJsonSerDe.deserializeStructType(json);
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

    /** Whether the table's protocol has the deletionVectors feature (reader 3 / writer 7). */
    /** Whether the table's protocol lets a commit carry domain metadata (where kbackfill keeps a job's state). */
    static boolean supportsDomainMetadata(io.delta.kernel.Snapshot snapshot) {
        return ((io.delta.kernel.internal.SnapshotImpl) snapshot).getProtocol()
                .supportsFeature(io.delta.kernel.internal.tablefeatures.TableFeatures.DOMAIN_METADATA_W_FEATURE);
    }

    static boolean supportsDeletionVectors(io.delta.kernel.Snapshot snapshot) {
        return ((io.delta.kernel.internal.SnapshotImpl) snapshot).getProtocol()
                .supportsFeature(io.delta.kernel.internal.tablefeatures.TableFeatures.DELETION_VECTORS_RW_FEATURE);
    }

    /**
     * The table features whose metadata kbackfill's rewrites of data files would drop: row tracking (copies and
     * replaced rows would get new row ids) and clustering (copied and compacted files would lose their layout).
     */
    static java.util.List<String> rewriteSensitiveFeatures(io.delta.kernel.Snapshot snapshot) {
        io.delta.kernel.internal.actions.Protocol protocol = ((io.delta.kernel.internal.SnapshotImpl) snapshot).getProtocol();
        java.util.List<String> features = new java.util.ArrayList<>();
        if (protocol.supportsFeature(io.delta.kernel.internal.tablefeatures.TableFeatures.ROW_TRACKING_W_FEATURE)) {
            features.add("rowTracking");
        }
        if (protocol.supportsFeature(io.delta.kernel.internal.tablefeatures.TableFeatures.CLUSTERING_W_FEATURE)) {
            features.add("clustering");
        }
        return features;
    }

    /**
     * The table features Delta Kernel cannot write (generated columns, CHECK constraints, identity columns, ...), by
     * name: a commit to the table would be refused, so a run is refused before anything is read.
     */
    static java.util.List<String> unwritableFeatures(io.delta.kernel.Snapshot snapshot) {
        io.delta.kernel.internal.SnapshotImpl impl = (io.delta.kernel.internal.SnapshotImpl) snapshot;
        io.delta.kernel.internal.actions.Metadata metadata = impl.getMetadata();
        return impl.getProtocol().getImplicitlyAndExplicitlySupportedFeatures().stream()
                .filter(f -> !f.hasKernelWriteSupport(metadata))
                .map(io.delta.kernel.internal.tablefeatures.TableFeature::featureName).sorted().toList();
    }

    /** The table's id ({@code metaData.id}), made when the table was created: another table at that path has another. */
    static String tableId(io.delta.kernel.Snapshot snapshot) {
        return ((io.delta.kernel.internal.SnapshotImpl) snapshot).getMetadata().getId();
    }

    /** Whether the table maps columns to physical names ({@code delta.columnMapping.mode} name or id). */
    static boolean mapsColumns(io.delta.kernel.Snapshot snapshot) {
        String mode = snapshot.getTableProperties().getOrDefault("delta.columnMapping.mode", "none");
        return mode.equalsIgnoreCase("name") || mode.equalsIgnoreCase("id");
    }

    /** Whether the table allows its columns' types to widen ({@code delta.enableTypeWidening}). */
    static boolean widensTypes(io.delta.kernel.Snapshot snapshot) {
        return Boolean.parseBoolean(snapshot.getTableProperties().getOrDefault("delta.enableTypeWidening", "false"));
    }

    /** The table's root, fully qualified, as the scan reads deletion vectors relative to it. */
    static String tableRoot(Row scanState) {
        return io.delta.kernel.internal.data.ScanStateRow.getTableRoot(scanState).toString();
    }

    /** How many rows a scan file's deletion vector marks deleted (0 without one). */
    static long deletedRows(Row scanFile) {
        DeletionVectorDescriptor dv = InternalScanFileUtils.getDeletionVectorDescriptorFromRow(scanFile);
        return dv == null ? 0 : dv.getCardinality();
    }

    /** The positions a scan file's deletion vector marks deleted (none without one). */
    static org.roaringbitmap.RoaringBitmap deletedPositions(io.delta.kernel.engine.Engine engine, String tableRoot,
                                                            Row scanFile) {
        org.roaringbitmap.RoaringBitmap positions = new org.roaringbitmap.RoaringBitmap();
        DeletionVectorDescriptor dv = InternalScanFileUtils.getDeletionVectorDescriptorFromRow(scanFile);
        if (dv != null) {
            for (long p : DeletionVectorUtils.loadNewDvAndBitmap(engine, tableRoot, dv)._2.toArray()) {
                positions.add(Math.toIntExact(p));
            }
        }
        return positions;
    }

    /**
     * The commit action adding a scan file's data file again with a new deletion vector: the same file, size and
     * tags and row-tracking fields, its statistics marked not tight ({@code tightBounds=false}: min/max may now be of
     * deleted rows). The protocol wants {@code numRecords} on every file that has a deletion vector: where the
     * source add carried no statistics, or none with it, {@code physicalRows} (the file's rows, deleted or not) gives it.
     */
    static Row addWithDeletionVector(Row scanFile, DeletionVectorDescriptor dv, java.util.function.LongSupplier physicalRows) {
        Row add = addOf(scanFile);
        StructType from = add.getSchema();
        Map<Integer, Object> values = new HashMap<>();
        for (int i = 0; i < AddFile.FULL_SCHEMA.length(); i++) {
            String name = AddFile.FULL_SCHEMA.at(i).getName();
            int o = from.indexOf(name);
            if (o < 0 || add.isNullAt(o)) {
                continue;
            }
            switch (name) {
                case "path", "clusteringProvider" -> values.put(i, add.getString(o));
                case "partitionValues", "tags" -> values.put(i, add.getMap(o));
                case "size", "modificationTime", "baseRowId", "defaultRowCommitVersion" -> values.put(i, add.getLong(o));
                case "stats" -> values.put(i, looseBounds(add.getString(o), physicalRows));
                default -> { } // dataChange and deletionVector are set below
            }
        }
        values.computeIfAbsent(AddFile.FULL_SCHEMA.indexOf("stats"), i -> looseBounds("{}", physicalRows));
        values.put(AddFile.FULL_SCHEMA.indexOf("dataChange"), true);
        values.put(AddFile.FULL_SCHEMA.indexOf("deletionVector"), dv.toRow());
        return SingleAction.createAddFileSingleAction(new GenericRow(AddFile.FULL_SCHEMA, values));
    }

    private static String looseBounds(String stats, java.util.function.LongSupplier physicalRows) {
        try {
            com.fasterxml.jackson.databind.node.ObjectNode node = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(stats);
            if (!node.has("numRecords")) {
                node.put("numRecords", physicalRows.getAsLong());
            }
            node.put("tightBounds", false);
            return JSON.writeValueAsString(node);
        } catch (java.io.IOException | ClassCastException e) {
            return stats; // not an object: left as written
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();
}
