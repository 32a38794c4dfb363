package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.verify.TargetLookup;
import dev.kbackfill.core.verify.TargetRow;
import dev.kbackfill.core.verify.Values;
import dev.kbackfill.core.verify.Verification;

/**
 * What a table holds for the keys of a verified range: one read-only statement per thousand keys (no locking
 * read), selecting the keys, every value column the job writes and the metadata columns the table has, then the
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
    private final SinkSettings settings;
    private final SinkSettings.MetadataColumns meta;
    private long rows;

    JdbcTargetLookup(Connection connection, Dialect dialect, Binder binder, TableName name, TargetTable table,
                     TableName ledgerName, Optional<TargetTable> ledger, SinkSettings settings) {
        this.connection = connection;
        this.dialect = dialect;
        this.binder = binder;
        this.name = name;
        this.table = table;
        this.ledgerName = ledgerName;
        this.ledger = ledger;
        this.settings = settings;
        this.meta = settings.metadata();
    }

    @Override
    public boolean hasColumn(String column) {
        return table.column(column).isPresent();
    }

    @Override
    public Map<KeyIdentity, TargetRow> lookup(List<Change> expected, String topic,
                                              java.util.function.Function<Change, Map<String, Object>> expectedValues) {
        Map<KeyIdentity, TargetRow> found = new HashMap<>();
        if (expected.isEmpty()) {
            return found;
        }
        Map<KeyIdentity, Change> byKey = new HashMap<>();
        expected.forEach(c -> byKey.put(KeyIdentity.of(c.key()), c));
        List<String> keyFields = TargetLookup.keyFields(expected);
        try {
            // every column the job writes (not the key, not the metadata), by column name: each is judged
            LinkedHashMap<String, TableColumn> values = new LinkedHashMap<>();
            for (TableColumn col : table.columns()) {
                if (settings.writesValueColumn(col.name()) && keyFields.stream().noneMatch(col.name()::equalsIgnoreCase)) {
                    values.put(col.name(), col);
                }
            }
            Map<KeyIdentity, StoredVersions.Stored> stored = read(table, name, expected, keyFields, true, values);
            rows += stored.size();
            stored.forEach((key, s) -> {
                Change c = byKey.get(key);
                if (c == null || !s.live()) {
                    found.put(key, TargetRow.deleted(s.version()));
                    return;
                }
                Map<String, Object> want = expectedValues.apply(c);
                List<String> differing = new java.util.ArrayList<>(want == null ? List.of()
                        : Values.differing(want, s.values()));
                differing.addAll(s.finer());
                found.put(key, TargetRow.live(s.version(), Verification.version(c, topic), s.values(), differing));
            });
            if (ledger.isPresent()) {
                Map<KeyIdentity, StoredVersions.Stored> deletes = read(ledger.get(), ledgerName, expected, keyFields,
                        false, new LinkedHashMap<>());
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

    private Map<KeyIdentity, StoredVersions.Stored> read(TargetTable t, TableName n, List<Change> expected,
                                                         List<String> keyFields, boolean liveRows,
                                                         LinkedHashMap<String, TableColumn> values)
            throws SQLException, Binder.Mismatch {
        LinkedHashMap<String, TableColumn> keys = new LinkedHashMap<>();
        for (String k : keyFields) {
            keys.put(k, t.column(k).orElseThrow(() -> new SinkConfigException("table " + n
                    + " has no column for key field '" + k + "'; check --key-fields and --table")));
        }
        return StoredVersions.lookup(connection, dialect, binder, n.quoted(dialect), keys, t.column(meta.topic()),
                t.column(meta.partition()), t.column(meta.offset()), t.column(meta.timestamp()), t.column(meta.logTime()),
                t.column(meta.version()), liveRows ? t.column(meta.deleted()) : Optional.empty(), liveRows,
                expected, values, false);
    }

    /** A value a column of the table cannot hold, or a key longer than its column: what the sink refuses. */
    @Override
    public Optional<String> refusal(Change decoded) {
        if (decoded.values() == null) {
            return Optional.empty(); // a delete
        }
        try {
            for (Map.Entry<String, Object> key : decoded.key().entrySet()) {
                Optional<TableColumn> column = table.column(key.getKey());
                if (column.isPresent() && key.getValue() != null) {
                    binder.checkKey(key.getValue(), column.get(), settings.typedKeys());
                }
            }
            for (Map.Entry<String, Object> value : decoded.values().entrySet()) {
                Optional<TableColumn> column = table.column(value.getKey());
                if (column.isPresent() && value.getValue() != null && settings.writesValueColumn(column.get().name())) {
                    binder.copyText(value.getValue(), column.get());
                }
            }
            return Optional.empty();
        } catch (Binder.Mismatch e) {
            return Optional.of(e.getMessage());
        }
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
