package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.verify.TargetLookup;
import dev.kbackfill.core.verify.TargetRow;
import dev.kbackfill.core.verify.Values;

/**
 * What a table holds for the keys of a verified range: one read-only statement per thousand keys (no locking
 * read), selecting the keys, the value columns the range has and the metadata columns the table has, then the
 * tombstone ledger's entries for the same keys. A table without metadata columns (written by another tool) gives
 * rows without versions, judged by their values. Only the range's keys move, however large the table.
 */
final class JdbcTargetLookup implements TargetLookup {

    private final Connection connection;
    private final Dialect dialect;
    private final Binder binder;
    private final TableName name;
    private final TargetTable table;
    private final TableName ledgerName;
    private final Optional<TargetTable> ledger;
    private final SinkSettings.MetadataColumns meta;
    private long rows;

    JdbcTargetLookup(Connection connection, Dialect dialect, Binder binder, TableName name, TargetTable table,
                     TableName ledgerName, Optional<TargetTable> ledger, SinkSettings.MetadataColumns meta) {
        this.connection = connection;
        this.dialect = dialect;
        this.binder = binder;
        this.name = name;
        this.table = table;
        this.ledgerName = ledgerName;
        this.ledger = ledger;
        this.meta = meta;
    }

    @Override
    public Map<KeyIdentity, TargetRow> lookup(List<Change> expected, RowShape shape, String topic) {
        Map<KeyIdentity, TargetRow> found = new HashMap<>();
        if (expected.isEmpty()) {
            return found;
        }
        Map<KeyIdentity, Change> byKey = new HashMap<>();
        expected.forEach(c -> byKey.put(KeyIdentity.of(c.key()), c));
        try {
            LinkedHashMap<String, TableColumn> values = new LinkedHashMap<>();
            for (Column v : shape.valueColumns()) {
                table.column(v.name()).filter(col -> !isMetadata(col.name())).ifPresent(col -> values.put(v.name(), col));
            }
            Map<KeyIdentity, StoredVersions.Stored> stored = read(table, name, expected, shape, true, values);
            rows += stored.size();
            stored.forEach((key, s) -> {
                Change c = byKey.get(key);
                found.put(key, s.live()
                        ? TargetRow.live(s.version(), s.values(), c == null ? List.of() : Values.differing(c.values(), s.values()))
                        : TargetRow.deleted(s.version()));
            });
            if (ledger.isPresent()) {
                Map<KeyIdentity, StoredVersions.Stored> deletes = read(ledger.get(), ledgerName, expected, shape, false,
                        new LinkedHashMap<>());
                rows += deletes.size();
                deletes.forEach((key, s) -> found.merge(key, TargetRow.deleted(s.version()), TargetRow::merge));
            }
            connection.rollback(); // a read: end its transaction (and its snapshot)
            return found;
        } catch (SQLException e) {
            throw new SinkException("reading " + name + " back failed: " + e.getMessage() + " (SQL state "
                    + e.getSQLState() + ")", e);
        } catch (Binder.Mismatch e) {
            throw new SinkConfigException("table " + name + " cannot hold the range's keys: " + e.getMessage());
        }
    }

    private boolean isMetadata(String column) {
        return List.of(meta.topic(), meta.partition(), meta.offset(), meta.timestamp(), meta.logTime(), meta.version(),
                meta.deleted()).stream().anyMatch(column::equalsIgnoreCase);
    }

    private Map<KeyIdentity, StoredVersions.Stored> read(TargetTable t, TableName n, List<Change> expected,
                                                         RowShape shape, boolean liveRows,
                                                         LinkedHashMap<String, TableColumn> values)
            throws SQLException, Binder.Mismatch {
        LinkedHashMap<String, TableColumn> keys = new LinkedHashMap<>();
        for (Column k : shape.keyColumns()) {
            keys.put(k.name(), t.column(k.name()).orElseThrow(() -> new SinkConfigException("table " + n
                    + " has no column for key field '" + k.name() + "'; check --key-fields and --table")));
        }
        return StoredVersions.lookup(connection, dialect, binder, n.quoted(dialect), keys, t.column(meta.topic()),
                t.column(meta.partition()), t.column(meta.offset()), t.column(meta.timestamp()), t.column(meta.logTime()),
                t.column(meta.version()), liveRows ? t.column(meta.deleted()) : Optional.empty(), liveRows,
                expected, values, false);
    }

    @Override
    public long rowsRead() {
        return rows;
    }

    @Override
    public int keysPerLookup() {
        return 10_000;
    }
}
