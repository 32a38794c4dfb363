package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.LakeDamage;

/**
 * A Delta table whose files are missing or cut short, named in one line: the file, what it is to the table (a log
 * entry, a checkpoint, a data file, a deletion vector), what is wrong, and what mends it.
 */
final class DeltaDamage {

    private DeltaDamage() {
    }

    /** How Delta tables' files are named and mended: {@code reading} and {@code named} of a table. */
    static final LakeDamage.Format FORMAT = new LakeDamage.Format("Delta", DeltaDamage::role, DeltaDamage::remedy);

    /** What a file is to its table, from its name. */
    static String role(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        if (path.contains("/_delta_log/")) {
            return name.contains(".checkpoint") ? "checkpoint" : "log entry";
        }
        if (name.startsWith("deletion_vector_")) {
            return "deletion vector";
        }
        return "data file";
    }

    private static String remedy(String role) {
        return "restore it from a copy, or restore the table to a version that does not need it (Spark: RESTORE TABLE "
                + "delta.`PATH` TO VERSION AS OF N), then rerun";
    }
}
