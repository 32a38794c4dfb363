package dev.kbackfill.sink.jdbc;

/**
 * A column of the target table as the database describes it.
 *
 * @param name     its name, as stored
 * @param jdbcType its {@link java.sql.Types} code
 * @param typeName the database's name for its type
 * @param size     its precision or length, where the database says
 * @param scale    its scale (digits after the point), where the database says
 * @param nullable whether it may hold NULL (true unless the database says NOT NULL)
 */
record TableColumn(String name, int jdbcType, String typeName, int size, int scale, boolean nullable) {

    /** A column that may hold NULL. */
    TableColumn(String name, int jdbcType, String typeName, int size, int scale) {
        this(name, jdbcType, typeName, size, scale, true);
    }

    /** The type as SQL for a CAST: decimals keep their precision and scale, so a cast never rounds. */
    String castType() {
        if ((jdbcType == java.sql.Types.DECIMAL || jdbcType == java.sql.Types.NUMERIC) && size > 0) {
            return typeName + "(" + size + ", " + Math.max(0, scale) + ")";
        }
        return typeName;
    }
}
