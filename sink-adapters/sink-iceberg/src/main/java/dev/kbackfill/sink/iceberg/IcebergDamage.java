package dev.kbackfill.sink.iceberg;

import dev.kbackfill.sink.lake.LakeDamage;

/**
 * An Iceberg table whose files are missing or cut short, named in one line: the file, what it is to the table (its
 * metadata file, a manifest list, a manifest, a data or delete file), what is wrong, and what mends it.
 */
final class IcebergDamage {

    private IcebergDamage() {
    }

    /** How Iceberg tables' files are named and mended: {@code reading} and {@code named} of a table. */
    static final LakeDamage.Format FORMAT = new LakeDamage.Format("Iceberg", IcebergDamage::role, IcebergDamage::remedy);

    /** What a file is to its table, from its name. */
    static String role(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        if (name.endsWith(".metadata.json")) {
            return "metadata file";
        }
        if (name.startsWith("snap-") && name.endsWith(".avro")) {
            return "manifest list";
        }
        if (name.matches(".*-m\\d+\\.avro")) {
            return "manifest";
        }
        if (path.contains("/metadata/kbackfill/")) {
            return "kbackfill state file";
        }
        return "data file";
    }

    private static String remedy(String role) {
        if (role.equals("metadata file")) {
            return "restore it, or point the table at an earlier metadata file (a path table: its "
                    + "metadata/version-hint.text; a catalog: register that file), then rerun";
        }
        return "restore it from a copy, or roll the table back to a snapshot that does not need it (Spark: CALL "
                + "CATALOG.system.rollback_to_snapshot('TABLE', SNAPSHOT_ID)), then rerun";
    }
}
