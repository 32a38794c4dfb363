package dev.kbackfill.core.record;

import java.util.Objects;

/**
 * A column of the rows a backfill writes.
 *
 * @param name     the column name
 * @param type     its type
 * @param nullable whether it may hold null
 */
public record Column(String name, ColumnType type, boolean nullable) {
    public Column {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }
}
