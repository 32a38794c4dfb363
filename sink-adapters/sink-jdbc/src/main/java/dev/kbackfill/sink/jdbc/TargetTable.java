package dev.kbackfill.sink.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.record.ColumnType;
import dev.kbackfill.core.sink.SinkSettings;

/** The target table as the database describes it: its columns (matched to fields by name) and primary key. */
final class TargetTable {

    final TableName name;
    private final Map<String, TableColumn> columns; // by lower-case name
    final List<String> primaryKey;

    private TargetTable(TableName name, Map<String, TableColumn> columns, List<String> primaryKey) {
        this.name = name;
        this.columns = columns;
        this.primaryKey = List.copyOf(primaryKey);
    }

    /** The column for a field: the exact name, else the only one equal ignoring case. */
    /** Every column, in the table's order. */
    java.util.Collection<TableColumn> columns() {
        return java.util.Collections.unmodifiableCollection(columns.values());
    }

    Optional<TableColumn> column(String field) {
        return Optional.ofNullable(columns.get(field.toLowerCase(Locale.ROOT)));
    }

    /** Reads the table's description, trying the name as given, then lower and upper case (unquoted folding). */
    static Optional<TargetTable> read(Connection c, TableName table) throws SQLException {
        DatabaseMetaData md = c.getMetaData();
        // MariaDB and MySQL call a database a catalog: without one, the metadata calls answer for a table of that
        // name in every database of the server (another job's tables, in another database, taken for these)
        String product = md.getDatabaseProductName().toLowerCase(Locale.ROOT);
        boolean catalogs = product.contains("mariadb") || product.contains("mysql");
        String catalog = catalogs ? table.schema().orElse(c.getCatalog()) : null;
        for (String n : List.of(table.name(), table.name().toLowerCase(Locale.ROOT), table.name().toUpperCase(Locale.ROOT))) {
            String schema = catalogs ? null : table.schema().orElse(null);
            Map<String, TableColumn> cols = new LinkedHashMap<>();
            try (ResultSet rs = md.getColumns(catalog, schema, n, null)) {
                while (rs.next()) {
                    String col = rs.getString("COLUMN_NAME");
                    cols.put(col.toLowerCase(Locale.ROOT), new TableColumn(col, rs.getInt("DATA_TYPE"),
                            rs.getString("TYPE_NAME"), rs.getInt("COLUMN_SIZE"), rs.getInt("DECIMAL_DIGITS"),
                            rs.getInt("NULLABLE") != DatabaseMetaData.columnNoNulls));
                }
            }
            if (cols.isEmpty()) {
                continue;
            }
            TreeMap<Short, String> pk = new TreeMap<>();
            try (ResultSet rs = md.getPrimaryKeys(catalog, schema, n)) {
                while (rs.next()) {
                    pk.put(rs.getShort("KEY_SEQ"), rs.getString("COLUMN_NAME"));
                }
            }
            return Optional.of(new TargetTable(new TableName(table.schema(), n), cols, new ArrayList<>(pk.values())));
        }
        return Optional.empty();
    }

    /** Creates the table for these columns: the key as primary key, then values, then the metadata columns. */
    static void create(Connection c, Dialect d, TableName table, List<Column> keys, List<Column> values,
                       SinkSettings.MetadataColumns meta, boolean softDelete) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(create(d, table, keys, values, meta, softDelete));
        }
    }

    /** The statement of {@link #create(Connection, Dialect, TableName, List, List, SinkSettings.MetadataColumns, boolean)}. */
    static String create(Dialect d, TableName table, List<Column> keys, List<Column> values,
                         SinkSettings.MetadataColumns meta, boolean softDelete) {
        List<String> defs = new ArrayList<>();
        List<String> keyTypes = d.keyColumnTypes(keys.stream().map(Column::type).toList());
        for (int i = 0; i < keys.size(); i++) {
            defs.add(d.quote(keys.get(i).name()) + " " + keyTypes.get(i) + " NOT NULL");
        }
        values.forEach(v -> defs.add(d.quote(v.name()) + " " + d.columnType(v.type(), false)));
        defs.add(d.quote(meta.topic()) + " " + d.columnType(ColumnType.STRING, false));
        defs.add(d.quote(meta.partition()) + " " + d.columnType(ColumnType.LONG, false));
        defs.add(d.quote(meta.offset()) + " " + d.columnType(ColumnType.LONG, false));
        defs.add(d.quote(meta.timestamp()) + " " + d.columnType(ColumnType.TIMESTAMP, false));
        defs.add(d.quote(meta.logTime()) + " " + d.columnType(ColumnType.TIMESTAMP, false));
        if (softDelete) {
            defs.add(d.quote(meta.deleted()) + " " + d.columnType(ColumnType.BOOLEAN, false));
        }
        String pk = "PRIMARY KEY (" + Sql.join(keys.stream().map(Column::name).toList(), d::quote) + ")";
        return "CREATE TABLE " + table.quoted(d) + " (" + String.join(", ", defs) + ", " + pk + ")";
    }

    /**
     * Creates the tombstone ledger of a table: its key columns and the version columns of each deleted key. Readers
     * of the target never see it as rows; the newer-wins guard consults it.
     */
    static void createLedger(Connection c, Dialect d, TableName ledger, List<Column> keys, List<Column> own,
                             SinkSettings.MetadataColumns meta) throws SQLException {
        create(c, d, ledger, keys, own, meta, false);
    }

    /** The statement adding a nullable column of the type {@code like} has (the log time beside a timestamp column). */
    static String addColumnLike(Dialect d, TableName table, String name, TableColumn like) {
        String type = like.jdbcType() == java.sql.Types.TIMESTAMP || like.jdbcType() == java.sql.Types.TIMESTAMP_WITH_TIMEZONE
                ? d.columnType(ColumnType.TIMESTAMP, false) : like.castType();
        return "ALTER TABLE " + table.quoted(d) + " ADD COLUMN " + d.quote(name) + " " + type;
    }

    /** Adds a nullable column of the type {@code like} has. */
    static void addColumnLike(Connection c, Dialect d, TableName table, String name, TableColumn like) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(addColumnLike(d, table, name, like));
        }
    }

    /** Adds nullable columns. */
    static void addColumns(Connection c, Dialect d, TableName table, List<Column> added) throws SQLException {
        try (Statement s = c.createStatement()) {
            for (Column col : added) {
                s.execute(addColumn(d, table, col));
            }
        }
    }

    /** The statement adding a nullable column for values of {@code column}'s type. */
    static String addColumn(Dialect d, TableName table, Column column) {
        return "ALTER TABLE " + table.quoted(d) + " ADD COLUMN " + d.quote(column.name()) + " "
                + d.columnType(column.type(), false);
    }
}
