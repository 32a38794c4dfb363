package dev.kbackfill.sink.delta;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
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
                        if (mayHold(scanFile, column, strings, longs, sorted)) {
                            files.add(scanFile);
                        }
                    }
                }
            }
        }
        return files;
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
