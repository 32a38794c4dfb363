package dev.kbackfill.testsink;

import java.nio.file.Path;
import java.util.Map;

/** What a test does to a {@code rowsfile:} destination by hand, as a user edits a table by SQL. */
public final class RowsFiles {

    private RowsFiles() {
    }

    /** The live rows' values by key text ({@code {kafka_key=k1}}). */
    public static Map<String, Map<String, Object>> liveRows(Path file) {
        Map<String, Map<String, Object>> live = new java.util.TreeMap<>();
        new RowsFile(file).read().rows.forEach((key, row) -> {
            if (!row.deleted()) {
                live.put(key, row.values());
            }
        });
        return live;
    }

    /** Sets one field of one key's row, its version untouched. */
    public static void setField(Path file, String keyText, String field, Object value) {
        RowsFile rows = new RowsFile(file);
        RowsFile.Contents contents = rows.read();
        RowsFile.Row row = contents.rows.get(keyText);
        if (row == null) {
            throw new IllegalArgumentException("no row " + keyText + " in " + file);
        }
        row.values().put(field, value);
        rows.save(contents);
    }
}
