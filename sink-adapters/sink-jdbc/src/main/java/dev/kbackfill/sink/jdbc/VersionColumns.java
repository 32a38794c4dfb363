package dev.kbackfill.sink.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.version.Guard;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;

/**
 * The columns that carry a row's version (topic, partition, offset, timestamp, log time) and its soft-delete flag: which of
 * them a table has, how a change fills them, and the newer-wins guard over them. The target and its tombstone
 * ledger both have them.
 */
final class VersionColumns {

    private final SinkSettings.MetadataColumns meta;
    private final Binder binder;

    VersionColumns(SinkSettings.MetadataColumns meta, Binder binder) {
        this.meta = meta;
        this.binder = binder;
    }

    /** The columns {@code t} has, in guard-friendly order: topic, partition, offset, timestamp, log time, deleted. */
    List<String> present(TargetTable t) {
        List<String> names = new ArrayList<>();
        for (String m : List.of(meta.topic(), meta.partition(), meta.offset(), meta.timestamp(), meta.logTime(),
                meta.version(), meta.deleted())) {
            t.column(m).ifPresent(col -> names.add(col.name()));
        }
        return names;
    }

    /** The newer-wins guard over the columns {@code t} has. */
    Guard guard(TargetTable t) {
        Optional<TableColumn> version = t.column(meta.version());
        return new Guard(t.column(meta.topic()).map(TableColumn::name), meta.partition(), meta.offset(), meta.timestamp(),
                meta.logTime(), version.map(TableColumn::name), version.map(VersionColumns::isText).orElse(false));
    }

    /**
     * The guard over the columns {@code t} has, meeting a row without kbackfill's version as {@code rows} says, by the
     * row's own column of the version field first where it has one the guard can compare ({@link #fieldColumn}).
     */
    Guard guard(TargetTable t, dev.kbackfill.core.version.Version.ForeignRows rows,
                Optional<dev.kbackfill.core.version.VersionField> field, dev.kbackfill.core.record.ColumnMapping mapping,
                Dialect d) {
        return guard(t).meeting(new Guard.Foreign(rows, fieldColumn(t, field, mapping, d)));
    }

    /**
     * The value column that holds the job's version field in every row, another writer's too (the payload order both
     * writers share): the column the job writes a top-level field into, where the table has it and its type lets
     * the field's values compare in SQL (whole numbers in a number column, strings in a text column, timestamps in
     * a timestamp column the database converts exactly, or epoch milliseconds in a number column). Empty otherwise:
     * rows of other writers are then met as the batch says.
     */
    static Optional<Guard.FieldColumn> fieldColumn(TargetTable t, Optional<dev.kbackfill.core.version.VersionField> field,
                                                   dev.kbackfill.core.record.ColumnMapping mapping, Dialect d) {
        if (field.isEmpty() || field.get().path().contains(".")) {
            return Optional.empty();
        }
        Optional<TableColumn> col = t.column(mapping.columnOf(field.get().path()));
        if (col.isEmpty()) {
            return Optional.empty();
        }
        int type = col.get().jdbcType();
        boolean number = List.of(java.sql.Types.BIGINT, java.sql.Types.INTEGER, java.sql.Types.NUMERIC,
                java.sql.Types.DECIMAL, java.sql.Types.SMALLINT, java.sql.Types.TINYINT).contains(type);
        boolean text = List.of(java.sql.Types.VARCHAR, java.sql.Types.CHAR, java.sql.Types.LONGVARCHAR,
                java.sql.Types.NVARCHAR, java.sql.Types.NCHAR, java.sql.Types.LONGNVARCHAR, java.sql.Types.CLOB)
                .contains(type);
        boolean time = (type == java.sql.Types.TIMESTAMP || type == java.sql.Types.TIMESTAMP_WITH_TIMEZONE)
                && !(d instanceof SqliteDialect) && d.epochMicros("x").isPresent();
        Guard.FieldForm form = switch (field.get().type()) {
            case INTEGER -> number ? Guard.FieldForm.NUMBER : null;
            case STRING -> text ? Guard.FieldForm.TEXT : null;
            case TIMESTAMP -> number ? Guard.FieldForm.EPOCH_MILLIS : time ? Guard.FieldForm.TIMESTAMP : null;
        };
        return form == null ? Optional.empty() : Optional.of(new Guard.FieldColumn(col.get().name(), form));
    }

    /** Whether a version column holds text (a string version field), else whole numbers. */
    static boolean isText(TableColumn c) {
        return !List.of(java.sql.Types.BIGINT, java.sql.Types.INTEGER, java.sql.Types.NUMERIC, java.sql.Types.DECIMAL,
                java.sql.Types.SMALLINT).contains(c.jdbcType());
    }

    /** What a metadata column holds. */
    enum Kind { PARTITION, OFFSET, TIMESTAMP, LOG_TIME, TOPIC, VERSION, DELETED }

    /** What the metadata column {@code name} holds, told once for a batch's rows rather than per value. */
    Kind kind(String name) {
        if (name.equalsIgnoreCase(meta.partition())) {
            return Kind.PARTITION;
        } else if (name.equalsIgnoreCase(meta.offset())) {
            return Kind.OFFSET;
        } else if (name.equalsIgnoreCase(meta.timestamp())) {
            return Kind.TIMESTAMP;
        } else if (name.equalsIgnoreCase(meta.logTime())) {
            return Kind.LOG_TIME;
        } else if (name.equalsIgnoreCase(meta.topic())) {
            return Kind.TOPIC;
        } else if (name.equalsIgnoreCase(meta.version())) {
            return Kind.VERSION;
        }
        return Kind.DELETED;
    }

    /** The COPY text of the metadata column {@code col}, which holds {@code kind}, for a change. */
    String copyText(Change c, WriteBatch batch, TableColumn col, Kind kind, boolean deleted) throws Binder.Mismatch {
        return switch (kind) {
            case PARTITION -> binder.copyText((long) c.partition(), col);
            case OFFSET -> binder.copyText(c.offset(), col);
            case TIMESTAMP -> binder.copyTimestamp(c.timestamp(), col);
            case LOG_TIME -> binder.copyTimestamp(c.logTime(), col);
            case TOPIC -> binder.copyText(batch.topic(), col);
            case VERSION -> binder.copyText(c.versionField(), col);
            case DELETED -> binder.copyText(deleted, col);
        };
    }

    /** Binds the columns {@code names} of {@code t} for a change from {@code index}; returns the next index. */
    int bind(PreparedStatement ps, int index, Change c, WriteBatch batch, TargetTable t, List<String> names,
             boolean deleted) throws SQLException, Binder.Mismatch {
        for (String name : names) {
            TableColumn col = t.column(name).orElseThrow();
            switch (kind(name)) {
                case PARTITION -> binder.bind(ps, index++, (long) c.partition(), col);
                case OFFSET -> binder.bind(ps, index++, c.offset(), col);
                case TIMESTAMP -> binder.bindTimestamp(ps, index++, c.timestamp(), col);
                case LOG_TIME -> binder.bindTimestamp(ps, index++, c.logTime(), col);
                case TOPIC -> binder.bind(ps, index++, batch.topic(), col);
                case VERSION -> bindVersion(ps, index++, c, col);
                case DELETED -> binder.bind(ps, index++, deleted, col);
            }
        }
        return index;
    }

    /** Binds a change's version to guard parameters ({@link Guard#againstParameters}) in {@code order}, from {@code index}. */
    int bindGuard(PreparedStatement ps, int index, List<Guard.Parameter> order, Change c, WriteBatch batch, TargetTable t)
            throws SQLException, Binder.Mismatch {
        for (Guard.Parameter p : order) {
            switch (p) {
                case TOPIC -> binder.bind(ps, index++, batch.topic(), t.column(meta.topic()).orElseThrow());
                case PARTITION -> ps.setLong(index++, c.partition());
                case OFFSET -> ps.setLong(index++, c.offset());
                case LOG_TIME -> binder.bindTimestamp(ps, index++, c.logTime(), t.column(meta.logTime()).orElseThrow());
                case VERSION -> bindVersion(ps, index++, c, t.column(meta.version()).orElseThrow());
            }
        }
        return index;
    }

    /** A change's version field, typed as its column is (a typed NULL where it has none: the guard tests it). */
    private static void bindVersion(PreparedStatement ps, int index, Change c, TableColumn col) throws SQLException {
        Object v = c.versionField();
        if (isText(col)) {
            if (v == null) {
                ps.setNull(index, java.sql.Types.VARCHAR);
            } else {
                ps.setString(index, v.toString());
            }
        } else if (v == null) {
            ps.setNull(index, java.sql.Types.BIGINT);
        } else if (v instanceof Long l) {
            ps.setLong(index, l);
        } else {
            throw new SQLException("version field value '" + v + "' is text, but column " + col.name()
                    + " holds whole numbers: the table was made for another --version-field type");
        }
    }
}
