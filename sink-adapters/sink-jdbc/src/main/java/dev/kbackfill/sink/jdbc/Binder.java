package dev.kbackfill.sink.jdbc;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import dev.kbackfill.core.record.JsonText;
import dev.kbackfill.core.sink.NarrowNumber;

/**
 * Binds a decoded value to a parameter for a column of a given JDBC type, converting where the conversion is
 * exact and refusing where it is not: a value that does not fit its column is a {@link Mismatch}, never a silent
 * truncation or a guess.
 */
final class Binder {

    /** Times stored as text: fixed width, so that text order is time order (the newer-wins guard compares them). */
    static final DateTimeFormatter TEXT_TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
            .withZone(ZoneOffset.UTC);

    /** A value that does not fit its column. */
    static class Mismatch extends Exception {
        Mismatch(String message) {
            super(message);
        }
    }

    /** A number a narrow column cannot hold but its 64-bit type would ({@link NarrowNumber}): worth widening for. */
    static final class TooNarrow extends Mismatch {
        final NarrowNumber width;

        TooNarrow(String message, NarrowNumber width) {
            super(message);
            this.width = width;
        }
    }

    private final String dialect;
    private final Dialect sql;
    /**
     * Each column's {@link Dialect#narrow} width, asked once: it reads the type's name, and was asked for every value
     * (a sixth of the writer thread's time in a PostgreSQL run).
     */
    private final Map<TableColumn, java.util.Optional<NarrowNumber>> widths = new java.util.concurrent.ConcurrentHashMap<>();

    Binder(Dialect dialect) {
        this.dialect = dialect.name();
        this.sql = dialect;
    }

    void bind(PreparedStatement ps, int index, Object value, TableColumn column) throws SQLException, Mismatch {
        if (value == null) {
            ps.setNull(index, column.jdbcType());
            return;
        }
        int t = column.jdbcType();
        checkWidth(value, column);
        if (dialect.equals("sqlite") && value instanceof Number && isNumber(t)) {
            bindSqliteNumber(ps, index, value, column);
            return;
        }
        switch (t) {
            case Types.BIGINT, Types.INTEGER, Types.SMALLINT, Types.TINYINT -> ps.setLong(index, toLong(value, column));
            case Types.DECIMAL, Types.NUMERIC -> ps.setBigDecimal(index, toDecimal(value, column));
            case Types.DOUBLE, Types.FLOAT, Types.REAL -> ps.setDouble(index, toDecimal(value, column).doubleValue());
            case Types.BOOLEAN, Types.BIT -> {
                if (!(value instanceof Boolean b)) {
                    throw mismatch(value, column);
                }
                ps.setBoolean(index, b);
            }
            case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> {
                byte[] b;
                if (value instanceof byte[] bytes) {
                    b = bytes;
                } else if (value instanceof String s) {
                    b = s.getBytes(StandardCharsets.UTF_8);
                } else {
                    throw mismatch(value, column);
                }
                checkLength(b.length, "bytes", column);
                ps.setBytes(index, b);
            }
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> bindTime(ps, index, toInstant(value, column), column);
            case Types.DATE -> ps.setObject(index, value instanceof LocalDate d ? d : parseDate(value, column));
            case Types.TIME -> ps.setObject(index, value instanceof LocalTime lt ? lt : parseTime(value, column));
            case Types.OTHER -> bindOther(ps, index, value, column);
            default -> ps.setString(index, storable(text(value), column));
        }
    }

    /**
     * Text as the database can store it: PostgreSQL's text types cannot hold the NUL character (U+0000), and would
     * refuse the whole batch without saying which record; here it is refused for the one record that carries it.
     */
    private String storable(String text, TableColumn column) throws Mismatch {
        if (dialect.equals("postgresql") && text.indexOf('\u0000') >= 0) {
            throw new Mismatch("the value of column " + column.name() + " holds the NUL character (U+0000), which "
                    + "PostgreSQL text cannot store");
        }
        checkLength(text.codePointCount(0, text.length()), "characters", column);
        return text;
    }

    /**
     * Whether a key value fits its column's length (and PostgreSQL's text), checked for each change before the batch
     * looks anything up by its key, so that a key the table cannot hold is a poison record of its own.
     */
    void checkKey(Object value, TableColumn column) throws Mismatch {
        checkKey(value, column, false);
    }

    /**
     * As {@link #checkKey(Object, TableColumn)}, and that the key keeps its identity in the column: a key is written
     * into a column only where distinct keys stay distinct rows there. Text into a number column only as the number's
     * own text ({@code "8"}, not {@code "08"}, which would be the row of {@code "8"}); and where keys come typed
     * ({@code typedKeys}: a JSON key {@code 8} and {@code "8"} are two keys), never text into a number column or a
     * number or boolean into a text column, which would make the two one row.
     */
    void checkKey(Object value, TableColumn column, boolean typedKeys) throws Mismatch {
        if (value instanceof String text) {
            storable(text, column);
        } else if (value instanceof byte[] b) {
            checkLength(b.length, "bytes", column);
        }
        java.util.Optional<String> conflict = dev.kbackfill.core.record.KeyTypes.conflict(value, kindOf(column),
                column.name(), column.typeName(), typedKeys);
        if (conflict.isPresent()) {
            throw new Mismatch(conflict.get());
        }
    }

    /** What the column holds, for {@link dev.kbackfill.core.record.KeyTypes} (SQLite's BOOLEAN by its declared name). */
    private static dev.kbackfill.core.record.KeyTypes.Kind kindOf(TableColumn column) {
        String declared = column.typeName().toUpperCase(java.util.Locale.ROOT);
        return switch (column.jdbcType()) {
            case Types.BIGINT, Types.INTEGER, Types.SMALLINT, Types.TINYINT, Types.NUMERIC, Types.DECIMAL, Types.DOUBLE,
                 Types.FLOAT, Types.REAL -> declared.contains("BOOL") ? dev.kbackfill.core.record.KeyTypes.Kind.OTHER
                    : dev.kbackfill.core.record.KeyTypes.Kind.NUMBER;
            case Types.VARCHAR, Types.CHAR, Types.LONGVARCHAR, Types.CLOB, Types.NVARCHAR, Types.NCHAR,
                 Types.LONGNVARCHAR -> dev.kbackfill.core.record.KeyTypes.Kind.TEXT;
            default -> dev.kbackfill.core.record.KeyTypes.Kind.OTHER;
        };
    }

    /**
     * A value longer than its column's declared length (a {@code VARCHAR(255)} key) is refused for the one record
     * that carries it, rather than failing its batch with the database's error ("Data too long"); SQLite, which does
     * not enforce declared lengths, takes it.
     */
    private void checkLength(int length, String unit, TableColumn column) throws Mismatch {
        int t = column.jdbcType();
        boolean sized = t == Types.VARCHAR || t == Types.CHAR || t == Types.NVARCHAR || t == Types.NCHAR
                || t == Types.VARBINARY || t == Types.BINARY;
        if (sized && !dialect.equals("sqlite") && column.size() > 0 && column.size() < (1 << 24) && length > column.size()) {
            throw new Mismatch("the value of column " + column.name() + " is " + length + " " + unit + " long, and "
                    + "the column holds at most " + column.size() + " (" + column.typeName() + "(" + column.size() + "))");
        }
    }

    /**
     * The value as text for PostgreSQL's {@code COPY ... (FORMAT csv)}, converted and checked exactly like
     * {@link #bind}; null for SQL NULL.
     */
    String copyText(Object value, TableColumn column) throws Mismatch {
        if (value == null) {
            return null;
        }
        checkWidth(value, column);
        return switch (column.jdbcType()) {
            case Types.BIGINT, Types.INTEGER, Types.SMALLINT, Types.TINYINT -> Long.toString(toLong(value, column));
            case Types.DECIMAL, Types.NUMERIC -> toDecimal(value, column).toPlainString();
            case Types.DOUBLE, Types.FLOAT, Types.REAL -> Double.toString(toDecimal(value, column).doubleValue());
            case Types.BOOLEAN, Types.BIT -> {
                if (!(value instanceof Boolean b)) {
                    throw mismatch(value, column);
                }
                yield b ? "t" : "f";
            }
            case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> "\\x" + java.util.HexFormat.of()
                    .formatHex(value instanceof byte[] b ? b : text(value).getBytes(StandardCharsets.UTF_8));
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> toInstant(value, column).toString();
            case Types.DATE -> (value instanceof LocalDate d ? d : parseDate(value, column)).toString();
            case Types.TIME -> (value instanceof LocalTime lt ? lt : parseTime(value, column)).toString();
            case Types.OTHER -> column.typeName().equalsIgnoreCase("uuid")
                    ? (value instanceof UUID u ? u : parseUuid(value, column)).toString() : storable(text(value), column);
            default -> storable(text(value), column);
        };
    }

    /** The record timestamp as COPY text for the metadata column's type. */
    String copyTimestamp(long epochMillis, TableColumn column) {
        return switch (column.jdbcType()) {
            case Types.BIGINT, Types.INTEGER, Types.NUMERIC, Types.DECIMAL -> Long.toString(epochMillis);
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> instantText(epochMillis);
            default -> TEXT_TIME.format(Instant.ofEpochMilli(epochMillis));
        };
    }

    /** The record timestamp, in whatever type the metadata column has. */
    void bindTimestamp(PreparedStatement ps, int index, long epochMillis, TableColumn column) throws SQLException {
        Instant i = Instant.ofEpochMilli(epochMillis);
        switch (column.jdbcType()) {
            case Types.BIGINT, Types.INTEGER, Types.NUMERIC, Types.DECIMAL -> ps.setLong(index, epochMillis);
            case Types.TIMESTAMP, Types.TIMESTAMP_WITH_TIMEZONE -> bindTime(ps, index, i, column);
            default -> ps.setString(index, TEXT_TIME.format(i));
        }
    }

    private void bindTime(PreparedStatement ps, int index, Instant instant, TableColumn column) throws SQLException {
        switch (dialect) {
            case "mariadb" -> ps.setObject(index, LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
            case "sqlite" -> ps.setString(index, TEXT_TIME.format(instant));
            default -> ps.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
        }
    }

    private void bindOther(PreparedStatement ps, int index, Object value, TableColumn column)
            throws SQLException, Mismatch {
        String type = column.typeName().toLowerCase(Locale.ROOT);
        if (type.equals("uuid")) {
            ps.setObject(index, value instanceof UUID u ? u : parseUuid(value, column));
        } else {
            ps.setObject(index, storable(text(value), column), Types.OTHER); // json, jsonb and other typed text
        }
    }

    /** A day of the log and its text up to the time ({@code 2024-01-01T}). */
    private record DayText(long day, String text) {
    }

    /** The day {@link #instantText} formatted last (immutable, so that threads sharing this binder agree). */
    private volatile DayText lastDay = new DayText(Long.MIN_VALUE, "");

    /** The days whose text is four digits of year, as {@code Instant.toString} writes them: years 0000 to 9999. */
    private static final long FIRST_PLAIN_DAY = java.time.LocalDate.of(0, 1, 1).toEpochDay();
    private static final long LAST_PLAIN_DAY = java.time.LocalDate.of(9999, 12, 31).toEpochDay();

    private static final long DAY_MILLIS = 86_400_000L;

    /**
     * {@code Instant.ofEpochMilli(epochMillis).toString()}, the date formatted once per day of the log and the time of
     * day by arithmetic: a third of COPY's formatting when it was {@code Instant.toString} for every row, and a
     * once-per-second cache missed on topics of fewer records than seconds. Years outside 0000-9999 take
     * {@code Instant}'s own path (a sign, more digits).
     */
    String instantText(long epochMillis) {
        long day = Math.floorDiv(epochMillis, DAY_MILLIS);
        DayText d = lastDay;
        if (d.day() != day) {
            if (day < FIRST_PLAIN_DAY || day > LAST_PLAIN_DAY) {
                return Instant.ofEpochMilli(epochMillis).toString();
            }
            d = new DayText(day, java.time.LocalDate.ofEpochDay(day) + "T");
            lastDay = d;
        }
        int ofDay = (int) Math.floorMod(epochMillis, DAY_MILLIS);
        int milli = ofDay % 1000;
        StringBuilder b = new StringBuilder(d.text().length() + 13).append(d.text());
        twoDigits(b, ofDay / 3_600_000).append(':');
        twoDigits(b, ofDay / 60_000 % 60).append(':');
        twoDigits(b, ofDay / 1000 % 60);
        if (milli != 0) {
            b.append('.').append((char) ('0' + milli / 100)).append((char) ('0' + milli / 10 % 10))
                    .append((char) ('0' + milli % 10));
        }
        return b.append('Z').toString();
    }

    private static StringBuilder twoDigits(StringBuilder b, int n) {
        return b.append((char) ('0' + n / 10)).append((char) ('0' + n % 10));
    }

    /**
     * Refuses a number its column would round or cut: a column of limited range ({@link NarrowNumber}), or a decimal
     * of a declared precision and scale that has fewer digits than the number. Never stored as another number.
     */
    private void checkWidth(Object value, TableColumn column) throws Mismatch {
        java.util.Optional<NarrowNumber> width = widths.computeIfAbsent(column, sql::narrow);
        if (width.isPresent() && !width.get().holds(value)) {
            throw new TooNarrow("value " + text(value) + " does not fit column " + column.name() + " ("
                    + column.typeName() + ")" + width.get().widening(value).map(w -> "; " + NarrowNumber.named(w)
                    + " column would hold it").orElse(""), width.get());
        }
        if ((column.jdbcType() == Types.DECIMAL || column.jdbcType() == Types.NUMERIC) && declaredDigits(column)) {
            BigDecimal d = NarrowNumber.decimal(value);
            if (d != null) {
                d = d.signum() == 0 ? BigDecimal.ZERO : d.stripTrailingZeros();
                int scale = Math.max(0, column.scale());
                if (d.scale() > scale || d.precision() - d.scale() > column.size() - scale) {
                    throw new Mismatch("value " + text(value) + " does not fit column " + column.name() + " ("
                            + column.castType() + "): it would be " + (d.scale() > scale ? "rounded" : "cut"));
                }
            }
        }
    }

    /**
     * Whether a decimal column has a precision of its own ({@code NUMERIC(10, 2)}); an unconstrained one
     * (PostgreSQL's {@code numeric}, reported with no precision or one of 1000 digits or more) holds every decimal.
     */
    private boolean declaredDigits(TableColumn column) {
        return column.size() > 0 && column.size() < 1000 && !dialect.equals("sqlite");
    }

    private static boolean isNumber(int jdbcType) {
        return switch (jdbcType) {
            case Types.BIGINT, Types.INTEGER, Types.SMALLINT, Types.TINYINT, Types.DECIMAL, Types.NUMERIC,
                    Types.DOUBLE, Types.FLOAT, Types.REAL -> true;
            default -> false;
        };
    }

    /**
     * A number into a number column of SQLite, which stores each value as a 64-bit integer or a double whatever the
     * column's declared type: as the integer where it is a whole one, else as the double where that reads back as
     * the number. A column of REAL affinity (its type names REAL, FLOA or DOUB) turns every number into a double, so
     * it takes only what a double holds. A number that would be rounded is refused (a TEXT column holds it exactly).
     */
    private static void bindSqliteNumber(PreparedStatement ps, int index, Object value, TableColumn column)
            throws SQLException, Mismatch {
        String type = column.typeName().toUpperCase(Locale.ROOT);
        boolean real = !type.contains("INT") && (type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB"));
        if (!real && NarrowNumber.INT64.holds(value)) {
            ps.setLong(index, NarrowNumber.decimal(value).longValueExact());
        } else if (NarrowNumber.FLOAT64.holds(value)) {
            ps.setDouble(index, ((Number) value).doubleValue());
        } else {
            throw new Mismatch("value " + text(value) + " does not fit column " + column.name() + " ("
                    + column.typeName() + "): SQLite keeps " + (real ? "every number of a REAL column as a double"
                    : "a number as a 64-bit integer or a double") + ", and this one would be rounded; a TEXT column "
                    + "holds it exactly");
        }
    }

    static String text(Object value) {
        if (value instanceof byte[] b) {
            return Base64.getEncoder().encodeToString(b);
        }
        if (value instanceof BigDecimal d) {
            return d.toPlainString();
        }
        if (value instanceof JsonText j) {
            return j.json();
        }
        return value.toString();
    }

    private static long toLong(Object value, TableColumn column) throws Mismatch {
        if (value instanceof Long l) {
            return l;
        }
        if (value instanceof Integer i) {
            return i;
        }
        if (value instanceof Boolean b && (column.jdbcType() == Types.TINYINT
                || column.typeName().toUpperCase(Locale.ROOT).contains("BOOL"))) {
            return b ? 1 : 0; // SQLite's BOOLEAN and MySQL's TINYINT(1) hold booleans as integers
        }
        if (value instanceof BigDecimal || value instanceof Double || value instanceof Float) {
            try {
                BigDecimal d = NarrowNumber.decimal(value);
                if (d != null) {
                    return d.longValueExact(); // a whole double (2.0) is the whole number
                }
            } catch (ArithmeticException e) {
                throw mismatch(value, column);
            }
        }
        throw mismatch(value, column);
    }

    private static BigDecimal toDecimal(Object value, TableColumn column) throws Mismatch {
        if (value instanceof BigDecimal d) {
            return d;
        }
        if (value instanceof Long || value instanceof Integer) {
            return BigDecimal.valueOf(((Number) value).longValue());
        }
        if (value instanceof Double || value instanceof Float) {
            return BigDecimal.valueOf(((Number) value).doubleValue());
        }
        throw mismatch(value, column);
    }

    private static Instant toInstant(Object value, TableColumn column) throws Mismatch {
        if (value instanceof Instant i) {
            return i;
        }
        if (value instanceof String s) {
            try {
                return OffsetDateTime.parse(s).toInstant();
            } catch (DateTimeParseException e) {
                throw mismatch(value, column);
            }
        }
        throw mismatch(value, column);
    }

    private static LocalDate parseDate(Object value, TableColumn column) throws Mismatch {
        try {
            return LocalDate.parse(value.toString());
        } catch (DateTimeParseException e) {
            throw mismatch(value, column);
        }
    }

    private static LocalTime parseTime(Object value, TableColumn column) throws Mismatch {
        try {
            return LocalTime.parse(value.toString());
        } catch (DateTimeParseException e) {
            throw mismatch(value, column);
        }
    }

    private static UUID parseUuid(Object value, TableColumn column) throws Mismatch {
        try {
            return UUID.fromString(value.toString());
        } catch (IllegalArgumentException e) {
            throw mismatch(value, column);
        }
    }

    private static Mismatch mismatch(Object value, TableColumn column) {
        String shown = text(value);
        if (shown.length() > 60) {
            shown = shown.substring(0, 57) + "...";
        }
        return new Mismatch("value " + (value instanceof String ? "'" + shown + "'" : shown) + " does not fit column "
                + column.name() + " (" + column.typeName() + ")");
    }
}
