package dev.kbackfill.sink.jdbc;

/**
 * A column of the target table as the database describes it.
 *
 * @param name     its name, as stored
 * @param jdbcType its {@link java.sql.Types} code
 * @param typeName the database's name for its type
 */
record TableColumn(String name, int jdbcType, String typeName) {
}
