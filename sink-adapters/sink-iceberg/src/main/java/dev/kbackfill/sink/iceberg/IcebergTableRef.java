package dev.kbackfill.sink.iceberg;

import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.sink.SinkConfigException;

/**
 * Which Iceberg table a {@code --sink iceberg:...} URL names: a path table ({@code iceberg:PATH}, a Hadoop table
 * whose metadata lives under the path, the counterpart of {@code delta:PATH}), or a table of a catalog
 * ({@code iceberg:jdbc:JDBC-URL#NAMESPACE.TABLE}, {@code iceberg:hadoop:WAREHOUSE#NAMESPACE.TABLE},
 * {@code iceberg:rest:URI#NAMESPACE.TABLE}); without {@code #...} a catalog table is {@code --table} in the
 * namespace {@code default}.
 *
 * @param catalog   the catalog kind, empty for a path table
 * @param location  the path of a path table, the catalog's JDBC URL, warehouse or URI otherwise
 * @param namespace a catalog table's namespace levels (empty for a path table)
 * @param table     a catalog table's name (empty for a path table)
 * @param branch    the branch written and read in place of {@code main}: a rebuild's shadow
 *                  ({@link IcebergPublication}), named by a {@code --table} ending in {@code @BRANCH}
 */
record IcebergTableRef(Optional<Catalog> catalog, String location, List<String> namespace, String table,
                       Optional<String> branch) {

    IcebergTableRef(Optional<Catalog> catalog, String location, List<String> namespace, String table) {
        this(catalog, location, namespace, table, Optional.empty());
    }

    /** The head of the branch this reference writes: {@code main}'s current snapshot, or the branch's; null for none. */
    org.apache.iceberg.Snapshot head(org.apache.iceberg.Table t) {
        return branch.isPresent() ? t.snapshot(branch.get()) : t.currentSnapshot();
    }

    /** The same table on {@code main}. */
    IcebergTableRef onMain() {
        return new IcebergTableRef(catalog, location, namespace, table, Optional.empty());
    }

    /** The catalogs a URL can name. */
    enum Catalog { JDBC, HADOOP, REST }

    static final List<String> FORMS = List.of("iceberg:PATH", "iceberg:jdbc:JDBC-URL#NAMESPACE.TABLE",
            "iceberg:hadoop:WAREHOUSE#NAMESPACE.TABLE", "iceberg:rest:URI#NAMESPACE.TABLE");

    /** The reference {@code url} spells; {@code defaultTable} is {@code --table}. */
    static IcebergTableRef parse(String url, String defaultTable) {
        int at = defaultTable == null ? -1 : defaultTable.lastIndexOf('@');
        if (at >= 0) {
            IcebergTableRef main = parse(url, defaultTable.substring(0, at));
            return new IcebergTableRef(main.catalog(), main.location(), main.namespace(), main.table(),
                    Optional.of(defaultTable.substring(at + 1)));
        }
        String rest = url.substring("iceberg:".length());
        for (Catalog c : Catalog.values()) {
            String prefix = c.name().toLowerCase(java.util.Locale.ROOT) + ":";
            if (rest.startsWith(prefix)) {
                String body = c == Catalog.JDBC ? rest : rest.substring(prefix.length()); // a JDBC URL keeps jdbc:
                int hash = body.lastIndexOf('#');
                String where = hash < 0 ? body : body.substring(0, hash);
                String name = hash < 0 ? "default." + defaultTable : body.substring(hash + 1);
                List<String> parts = List.of(name.split("\\.", -1));
                if (where.isBlank() || (c == Catalog.JDBC && where.equals("jdbc:")) || parts.size() < 2
                        || parts.stream().anyMatch(String::isBlank)) {
                    throw invalid(url);
                }
                return new IcebergTableRef(Optional.of(c), c == Catalog.HADOOP ? absolute(where) : where,
                        parts.subList(0, parts.size() - 1),
                        parts.get(parts.size() - 1));
            }
        }
        if (rest.isBlank()) {
            throw invalid(url);
        }
        return new IcebergTableRef(Optional.empty(), absolute(rest), List.of(), "");
    }

    /**
     * A local path made absolute (a table's files are named by its location, and a relative one would be resolved
     * against whatever directory a reader runs in); a URI with a scheme as it is.
     */
    static String absolute(String location) {
        if (location.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            return location;
        }
        return java.nio.file.Path.of(location).toAbsolutePath().normalize().toString();
    }

    private static SinkConfigException invalid(String url) {
        return new SinkConfigException("invalid --sink '" + dev.kbackfill.core.sink.SinkFactory.redact(url)
                + "': expected " + String.join(", ", FORMS));
    }

    boolean isPath() {
        return catalog.isEmpty();
    }

    /** The table for people: its path, or catalog and name (no credentials). */
    String shown() {
        return branch.map(b -> onMain().shown() + " (branch " + b + ")").orElseGet(this::shownOnMain);
    }

    private String shownOnMain() {
        return isPath() ? location : catalog.get().name().toLowerCase(java.util.Locale.ROOT) + " catalog "
                + dev.kbackfill.core.sink.SinkFactory.redact(location) + ", table " + String.join(".", namespace) + "." + table;
    }
}
