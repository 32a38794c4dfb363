package dev.kbackfill.spark;

import java.io.Serializable;
import java.util.Iterator;
import java.util.Map;

import dev.kbackfill.core.version.Version;
import org.apache.spark.sql.Row;

/** One change on its way to the MERGE: its key's ledger text, its version, and its row in the table's columns. */
final class Entry implements Serializable {
    private static final long serialVersionUID = 1L;
    final String key;
    final String topic;
    final int partition;
    final long offset;
    final long timestamp;
    final long logTime;
    final boolean tombstone;
    final Row row;
    /** The version field's value ({@code --version-field}: a Long or a String), or null. */
    final Comparable<?> field;

    Entry(String key, String topic, int partition, long offset, long timestamp, long logTime, boolean tombstone,
          Row row, Comparable<?> field) {
        this.key = key;
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
        this.timestamp = timestamp;
        this.logTime = logTime;
        this.tombstone = tombstone;
        this.row = row;
        this.field = field;
    }

    Version version() {
        return new Version(topic, partition, offset, timestamp, logTime, field);
    }

    /**
     * The mark a record leaves in its partition when it decoded but held a value the table cannot hold: counted
     * as refused (not as undecodable), then dropped before anything reads the entries.
     */
    static Entry refusedByTable(int partition) {
        return new Entry(null, null, partition, -1, 0, 0, false, null, null);
    }

    boolean isRefusedByTable() {
        return key == null;
    }

    /** The rows a MERGE takes from its source's entries (where an injected task failure may strike). */
    static Iterator<Row> rowsOf(Iterator<Entry> entries) {
        Faults.failTaskOnce("feeding the MERGE");
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return entries.hasNext();
            }

            @Override
            public Row next() {
                return entries.next().row;
            }
        };
    }

    /** Whether the ledger holds a delete of the change's key that the change does not supersede. */
    static boolean blocked(Map<String, Deleted> ledger, Entry e) {
        Deleted d = ledger.get(e.key);
        return d != null && !e.version().supersedes(d.version());
    }
}
