package dev.kbackfill.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import dev.kbackfill.sink.delta.DeltaEngineSupport;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * What Delta's writer enforces on a table that the rows of a wave must fit before its MERGE: the columns it computes
 * (generated and identity columns), which the rows and the MERGE leave out so that Delta computes them, and the
 * table's CHECK constraints, evaluated on the wave's rows first (as Delta does: a constraint that is false or NULL
 * is broken), so that a record that breaks one is a poison record under {@code --on-error} instead of a MERGE that
 * fails the wave.
 */
final class DeltaTableRules {

    private static final String PARTITION = "__kbackfill_partition";
    private static final String OFFSET = "__kbackfill_offset";

    /** Computed columns: a generated column's expression, or "" for an identity column. */
    private final Map<String, String> computed;
    /** CHECK constraints, name to expression. */
    private final Map<String, String> checks;

    private DeltaTableRules(Map<String, String> computed, Map<String, String> checks) {
        this.computed = computed;
        this.checks = checks;
    }

    /** The rules of the Delta table at {@code path} as it is now. */
    static DeltaTableRules of(String path) {
        return new DeltaTableRules(DeltaEngineSupport.computedColumns(path), DeltaEngineSupport.checkConstraints(path));
    }

    /** The columns Delta computes, which rows leave out. */
    Set<String> computed() {
        return computed.keySet();
    }

    /** The table's columns that a row gives: all but the computed ones. */
    StructType writable(StructType table) {
        StructType out = new StructType();
        for (StructField f : table.fields()) {
            if (!computed.containsKey(f.name())) {
                out = out.add(f);
            }
        }
        return out;
    }

    /**
     * The rows of {@code entries} that break a CHECK constraint: by their record's coordinates
     * ({@code partition:offset}), the constraint each breaks first, named with its expression. Rows that delete
     * (tombstones) are not checked: a hard delete writes no row, and a soft delete of an existing row changes only
     * its deletion marks. Generated columns are computed first, for constraints that name them.
     *
     * @param schema the rows' schema: the writable columns, then the tombstone flag
     */
    Map<String, String> broken(SparkSession spark, JavaRDD<Entry> entries, StructType schema,
                               String tombstone) {
        if (checks.isEmpty()) {
            return Map.of();
        }
        StructType probe = schema.add(PARTITION, DataTypes.IntegerType, false).add(OFFSET, DataTypes.LongType, false);
        int width = schema.size();
        Dataset<Row> rows = spark.createDataFrame(entries.map(e -> {
            Object[] values = new Object[width + 2];
            for (int i = 0; i < width; i++) {
                values[i] = e.row.get(i);
            }
            values[width] = e.partition;
            values[width + 1] = e.offset;
            return RowFactory.create(values);
        }), probe).where("NOT " + DeltaMergeSql.q(tombstone));
        for (Map.Entry<String, String> c : computed.entrySet()) {
            if (!c.getValue().isEmpty()) {
                rows = rows.withColumn(c.getKey(), functions.expr(c.getValue()));
            }
        }
        StringBuilder first = new StringBuilder("CASE");
        for (Map.Entry<String, String> c : checks.entrySet()) {
            first.append(" WHEN NOT coalesce((").append(c.getValue()).append("), false) THEN '")
                    .append(("the CHECK constraint " + c.getKey() + " (" + c.getValue() + ")").replace("\\", "\\\\")
                            .replace("'", "\\'")).append("'");
        }
        first.append(" END");
        Map<String, String> broken = new TreeMap<>();
        for (Row r : rows.selectExpr(PARTITION, OFFSET, first + " AS broken").where("broken IS NOT NULL")
                .collectAsList()) {
            broken.put(r.getInt(0) + ":" + r.getLong(1), r.getString(2));
        }
        return broken;
    }

    /** Per source partition, how many of {@code broken}'s records it holds. */
    static Map<Integer, Long> perPartition(Map<String, String> broken) {
        Map<Integer, Long> counts = new HashMap<>();
        for (String at : broken.keySet()) {
            counts.merge(Integer.parseInt(at.substring(0, at.indexOf(':'))), 1L, Long::sum);
        }
        return counts;
    }

    /** The records of {@code broken}, in partition and offset order. */
    static List<Raw> recordsOf(JavaRDD<Raw> raws, Map<String, String> broken) {
        Set<String> at = Set.copyOf(broken.keySet());
        List<Raw> found = new ArrayList<>(raws.filter(r -> at.contains(r.partition + ":" + r.offset)).collect());
        found.sort(java.util.Comparator.<Raw>comparingInt(r -> r.partition).thenComparingLong(r -> r.offset));
        return found;
    }
}
