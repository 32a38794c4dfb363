package dev.kbackfill.cli;

import java.nio.file.Files;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.sink.delta.DeltaTableRows;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/**
 * {@link ShapeProperty} on a Delta and an Iceberg table, read back by their formats' own readers (Delta Kernel,
 * Iceberg's generic reader with every delete applied).
 */
@Tag("kafka")
class LakeShapeIT {

    @Nested
    class Delta extends ShapeProperty {
        @Override
        String sink(String name) {
            return "delta:" + dir.resolve(name);
        }

        @Override
        boolean creationFixesTypes() {
            return true;
        }

        @Override
        Map<String, Map<String, String>> rows(String sink, String table) throws Exception {
            Map<String, Map<String, String>> rows = new TreeMap<>();
            String path = sink.substring("delta:".length());
            if (!Files.exists(java.nio.file.Path.of(path, "_delta_log"))) {
                return rows;
            }
            for (Map<String, Object> r : DeltaTableRows.rows(path)) {
                Map<String, String> row = new TreeMap<>();
                r.forEach((c, v) -> row.put(c.toLowerCase(Locale.ROOT), text(v)));
                rows.put(row.get("kafka_key"), row);
            }
            return rows;
        }
    }

    @Nested
    @Tag("iceberg")
    class Iceberg extends ShapeProperty {
        @Override
        String sink(String name) {
            return "iceberg:" + dir.resolve(name);
        }

        @Override
        boolean creationFixesTypes() {
            return true;
        }

        @Override
        Map<String, Map<String, String>> rows(String sink, String table) throws Exception {
            Map<String, Map<String, String>> rows = new TreeMap<>();
            String path = sink.substring("iceberg:".length());
            HadoopTables tables = new HadoopTables(new org.apache.hadoop.conf.Configuration());
            if (!tables.exists(path)) {
                return rows;
            }
            Table t = tables.load(path);
            List<Types.NestedField> fields = t.schema().columns();
            try (CloseableIterable<Record> records = IcebergGenerics.read(t).build()) {
                for (Record r : records) {
                    Map<String, String> row = new TreeMap<>();
                    for (Types.NestedField f : fields) {
                        row.put(f.name().toLowerCase(Locale.ROOT), text(r.getField(f.name())));
                    }
                    rows.put(row.get("kafka_key"), row);
                }
            }
            return rows;
        }
    }
}
