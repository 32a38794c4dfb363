package dev.kbackfill.sink.delta;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kbackfill.sink.lake.KeyOrder;
import io.delta.kernel.Scan;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterator;

/**
 * Which data files of a Delta table a batch's keys may live in, from the files' statistics for the first key column
 * (Kernel's own predicate pruning is coarse for many keys): what the sink probes and verification reads.
 */
final class DeltaPruning {

    private static final ObjectMapper JSON = new ObjectMapper();

    private DeltaPruning() {
    }

    /**
     * The files that may hold some of the keys: those whose statistics for the first key column are missing, or
     * whose [min, max] contains at least one incoming key. Strings compare in UTF-8 byte order, as Delta's
     * statistics do; a long string bound may be truncated, so it never prunes.
     */
    static List<Row> candidateFiles(Engine engine, Scan scan, StructType schema, int firstKey, java.util.Set<List<Object>> keys)
            throws IOException {
        return candidateFiles(engine, scan, schema, new int[] {firstKey}, List.of(), keys);
    }

    /**
     * The same, where the table may be partitioned: a file whose partition value for a key column (a table
     * partitioned by a key column, or by part of a compound key) is no incoming key's is left out, whatever its
     * statistics (which hold no partition column).
     *
     * @param keyOrdinals      the key columns, in the keys' order
     * @param partitionColumns the table's partition columns ({@code Snapshot#getPartitionColumnNames})
     */
    static List<Row> candidateFiles(Engine engine, Scan scan, StructType schema, int[] keyOrdinals,
                                    List<String> partitionColumns, java.util.Set<List<Object>> keys) throws IOException {
        int firstKey = keyOrdinals[0];
        // per key column the table is partitioned by: its name in the add actions, and the keys' values as text
        Map<String, java.util.Set<String>> byPartition = new java.util.HashMap<>();
        for (int k = 0; k < keyOrdinals.length; k++) {
            String name = schema.at(keyOrdinals[k]).getName();
            io.delta.kernel.types.DataType type = schema.at(keyOrdinals[k]).getDataType();
            boolean exactText = type instanceof StringType || type instanceof LongType
                    || type instanceof io.delta.kernel.types.IntegerType;
            if (!exactText || partitionColumns.stream().noneMatch(name::equalsIgnoreCase)) {
                continue; // other types' partition text is not compared here: no pruning by them
            }
            java.util.Set<String> values = new java.util.HashSet<>();
            for (List<Object> key : keys) {
                values.add(partitionText(key.get(k)));
            }
            byPartition.put(physicalName(schema, keyOrdinals[k]), values);
        }
        io.delta.kernel.types.FieldMetadata fm = schema.at(firstKey).getMetadata();
        String column = fm.contains("delta.columnMapping.physicalName")
                ? fm.getString("delta.columnMapping.physicalName") : schema.at(firstKey).getName();
        boolean strings = schema.at(firstKey).getDataType() instanceof StringType;
        boolean longs = schema.at(firstKey).getDataType() instanceof LongType;
        List<Row> files = new ArrayList<>();
        TreeSet<Object> sorted = null; // built on the first file to prune: a new table has none
        try (CloseableIterator<FilteredColumnarBatch> it = scan.getScanFiles(engine, true)) {
            while (it.hasNext()) {
                FilteredColumnarBatch b = it.next();
                try (CloseableIterator<Row> rows = b.getRows()) {
                    while (rows.hasNext()) {
                        Row scanFile = rows.next();
                        if (sorted == null && (strings || longs)) {
                            sorted = new TreeSet<>(KeyOrder::compareValues);
                            for (List<Object> k : keys) {
                                sorted.add(k.get(0));
                            }
                        }
                        if (inKeyPartitions(scanFile, byPartition) && mayHold(scanFile, column, strings, longs, sorted)) {
                            files.add(scanFile);
                        }
                    }
                }
            }
        }
        return files;
    }

    private static boolean inKeyPartitions(Row scanFile, Map<String, java.util.Set<String>> byPartition) {
        if (byPartition.isEmpty()) {
            return true;
        }
        Map<String, String> values = io.delta.kernel.internal.InternalScanFileUtils.getPartitionValues(scanFile);
        for (Map.Entry<String, java.util.Set<String>> p : byPartition.entrySet()) {
            String value = values.get(p.getKey());
            if (value != null && !p.getValue().contains(value)) {
                return false;
            }
        }
        return true;
    }

    /** A key value as Delta writes it among a file's partition values (decimals and numbers as their plain text). */
    private static String partitionText(Object v) {
        if (v instanceof java.math.BigDecimal d) {
            return d.toPlainString();
        }
        return String.valueOf(v);
    }

    static String physicalName(StructType schema, int ordinal) {
        io.delta.kernel.types.FieldMetadata fm = schema.at(ordinal).getMetadata();
        return fm.contains("delta.columnMapping.physicalName") ? fm.getString("delta.columnMapping.physicalName")
                : schema.at(ordinal).getName();
    }

    private static boolean mayHold(Row scanFile, String column, boolean strings, boolean longs, TreeSet<Object> keys)
            throws IOException {
        if (!strings && !longs) {
            return true;
        }
        Optional<String> stats = KernelInternals.statsJson(scanFile);
        if (stats.isEmpty()) {
            return true;
        }
        JsonNode s = JSON.readTree(stats.get());
        JsonNode min = s.path("minValues").get(column);
        JsonNode max = s.path("maxValues").get(column);
        if (min == null || max == null || min.isNull() || max.isNull()) {
            return true;
        }
        if (strings && (min.asText().length() >= 32 || max.asText().length() >= 32)) {
            return true;
        }
        Object lo = strings ? min.asText() : (Object) min.asLong();
        Object hi = strings ? max.asText() : (Object) max.asLong();
        Object first = keys.ceiling(lo);
        return first != null && KeyOrder.compareValues(first, hi) <= 0;
    }

}
