package dev.kbackfill.sink.delta;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.StructType;
import org.apache.hadoop.conf.Configuration;

/**
 * Reads a whole Delta table back through Kernel's scan API, as maps of column name to value (timestamps as long
 * microseconds, dates as int days, decimals as BigDecimal): for tests and checks on small tables.
 */
public final class DeltaTableRows {

    private DeltaTableRows() {
    }

    public static List<Map<String, Object>> rows(String path) throws Exception {
        return rows(path, Map.of());
    }

    /** The rows of a table whose filesystem needs {@code storage} settings ({@code fs.s3a.endpoint}, ...). */
    public static List<Map<String, Object>> rows(String path, Map<String, ?> storage) throws Exception {
        Engine engine = DefaultEngine.create(DeltaFiles.hadoopConfiguration(storage));
        Snapshot snapshot = TableManager.loadSnapshot(path).build(engine);
        Scan scan = snapshot.getScanBuilder().build();
        Row scanState = scan.getScanState(engine);
        StructType schema = snapshot.getSchema();
        List<Map<String, Object>> out = new ArrayList<>();
        for (Row scanFile : DeltaFiles.scanFiles(engine, scan)) {
            DeltaFiles.scan(engine, scanState, scanFile, schema, (position, values) -> {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int c = 0; c < schema.length(); c++) {
                    row.put(schema.at(c).getName(), values[c]);
                }
                out.add(row);
            });
        }
        return out;
    }

    /**
     * The table's live data files, each with the number of its rows its deletion vector marks deleted (0 without
     * one), in the order of the table's state.
     */
    public static Map<String, Long> dataFiles(String path) throws Exception {
        Engine engine = DefaultEngine.create(new Configuration());
        Scan scan = TableManager.loadSnapshot(path).build(engine).getScanBuilder().build();
        Map<String, Long> files = new LinkedHashMap<>();
        for (Row scanFile : DeltaFiles.scanFiles(engine, scan)) {
            files.put(KernelInternals.status(scanFile).getPath(), KernelInternals.deletedRows(scanFile));
        }
        return files;
    }

    /** The table's live rows, counted by streaming the first column of every file (for tables of any size). */
    public static long count(String path) throws Exception {
        Engine engine = DefaultEngine.create(new Configuration());
        return count(engine, TableManager.loadSnapshot(path).build(engine));
    }

    /** The live rows of the table's version {@code version} (time travel). */
    public static long count(String path, long version) throws Exception {
        Engine engine = DefaultEngine.create(new Configuration());
        return count(engine, TableManager.loadSnapshot(path).atVersion(version).build(engine));
    }

    private static long count(Engine engine, Snapshot snapshot) throws Exception {
        StructType schema = snapshot.getSchema();
        Scan scan = snapshot.getScanBuilder().withReadSchema(new StructType().add(schema.at(0))).build();
        Row scanState = scan.getScanState(engine);
        long[] rows = {0};
        for (Row scanFile : DeltaFiles.scanFiles(engine, scan)) {
            DeltaFiles.scan(engine, scanState, scanFile, schema, (position, row) -> rows[0]++);
        }
        return rows[0];
    }

    /** The table's latest version. */
    public static long version(String path) {
        return version(path, Map.of());
    }

    /** The latest version of a table whose filesystem needs {@code storage} settings. */
    public static long version(String path, Map<String, ?> storage) {
        Engine engine = DefaultEngine.create(DeltaFiles.hadoopConfiguration(storage));
        return TableManager.loadSnapshot(path).build(engine).getVersion();
    }
}
