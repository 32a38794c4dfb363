package dev.kbackfill.sink.iceberg;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.sink.lake.ObjectStoreLease;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.hadoop.HadoopTables;

/**
 * Where an Iceberg table lives and how it is reached: a path table through {@link HadoopTables}, a catalog table
 * through Iceberg's own catalog for the kind ({@code jdbc}, {@code hadoop}, {@code rest}). The sink's properties
 * ({@code --sink-property}, {@code --sink-command-config}) are the catalog's properties, except {@code fs.*} and
 * {@code hadoop.*}, which are Hadoop's (the filesystem's: {@code fs.s3a.endpoint}, ...), and {@code catalog-name}, the
 * catalog's name (default {@value #DEFAULT_CATALOG}: a JDBC catalog keys its tables by it, so it must match the name
 * other engines give the catalog). A JDBC catalog's user and password are {@code --sink-user} and the sink password
 * from the environment.
 */
final class IcebergTables implements AutoCloseable {

    static final String DEFAULT_CATALOG = "kbackfill";
    static final String CATALOG_NAME = "catalog-name";

    private final IcebergTableRef ref;
    private final Configuration hadoop;
    private final HadoopTables paths;
    private final Catalog catalog;
    /** The catalog's warehouse, where it has one: a new table's location is {@code WAREHOUSE/NAMESPACE/TABLE}. */
    private final String warehouse;

    private IcebergTables(IcebergTableRef ref, Configuration hadoop, HadoopTables paths, Catalog catalog,
                          String warehouse) {
        this.ref = ref;
        this.hadoop = hadoop;
        this.paths = paths;
        this.catalog = catalog;
        this.warehouse = warehouse;
    }

    static IcebergTables open(IcebergTableRef ref, SinkSettings settings) {
        Configuration hadoop = new Configuration();
        Map<String, String> properties = new HashMap<>();
        settings.clientConfig().forEach((k, v) -> {
            if (k.startsWith("fs.") || k.startsWith("hadoop.")) {
                hadoop.set(k, String.valueOf(v));
            } else {
                properties.put(k, String.valueOf(v));
            }
        });
        dev.kbackfill.sink.lake.FileSystemSchemes.s3AsS3a(hadoop);
        dev.kbackfill.sink.lake.LocalLakeFileSystem.use(hadoop);
        // an object store is refused for its renames first (that is the answer there), then an unknown scheme
        if (ref.isPath()) {
            refuseRenamesOnObjectStore(ref, "a path table", ref.location().replaceAll("/[^/]+/?$", ""));
            dev.kbackfill.sink.lake.FileSystemSchemes.require(ref.location(), hadoop, settings.url(),
                    IcebergTableRef.FORMS);
            return new IcebergTables(ref, hadoop, new HadoopTables(hadoop), null, null);
        }
        if (ref.catalog().orElseThrow() == IcebergTableRef.Catalog.HADOOP) {
            refuseRenamesOnObjectStore(ref, "a Hadoop catalog", ref.location());
            dev.kbackfill.sink.lake.FileSystemSchemes.require(ref.location(), hadoop, settings.url(),
                    IcebergTableRef.FORMS);
        }
        String name = Optional.ofNullable(properties.remove(CATALOG_NAME)).orElse(DEFAULT_CATALOG);
        IcebergTableRef.Catalog kind = ref.catalog().orElseThrow();
        properties.put(CatalogUtil.ICEBERG_CATALOG_TYPE, kind.name().toLowerCase(java.util.Locale.ROOT));
        switch (kind) {
            case JDBC -> {
                try {
                    java.sql.DriverManager.getDriver(ref.location());
                } catch (java.sql.SQLException e) {
                    // a typo in the URL's database kind: bad input, not a connection to retry
                    throw new SinkConfigException("invalid --sink '" + dev.kbackfill.core.sink.SinkFactory.redact(
                            settings.url()) + "': no JDBC driver for the catalog URL " + dev.kbackfill.core.sink
                            .SinkFactory.redact(ref.location()) + "; expected iceberg:jdbc: and a JDBC URL without its "
                            + "jdbc: prefix, e.g. iceberg:jdbc:postgresql://HOST/DB#NS.TABLE or "
                            + "iceberg:jdbc:sqlite:/data/catalog.db#NS.TABLE");
                }
                properties.put("uri", ref.location());
                settings.user().ifPresent(u -> properties.put("jdbc.user", u));
                settings.password().ifPresent(p -> properties.put("jdbc.password", p));
                if (properties.containsKey("warehouse")) {
                    properties.put("warehouse", IcebergTableRef.absolute(properties.get("warehouse")));
                } else {
                    throw new SinkConfigException("invalid --sink '" + dev.kbackfill.core.sink.SinkFactory.redact(
                            settings.url()) + "': a JDBC catalog needs the warehouse its tables are created in: "
                            + "--sink-property warehouse=PATH (a local path or s3a://BUCKET/PATH)");
                }
            }
            case HADOOP -> properties.put("warehouse", ref.location());
            case REST -> properties.put("uri", ref.location());
            default -> throw new IllegalStateException();
        }
        try {
            return new IcebergTables(ref, hadoop, null, CatalogUtil.buildIcebergCatalog(name, properties, hadoop),
                    properties.get("warehouse"));
        } catch (RuntimeException e) {
            throw new SinkException("cannot open the Iceberg " + kind.name().toLowerCase(java.util.Locale.ROOT)
                    + " catalog at " + dev.kbackfill.core.sink.SinkFactory.redact(ref.location()) + ": " + e.getMessage(), e);
        }
    }

    /**
     * A path table and a Hadoop catalog commit by renaming a metadata file in the table's storage: on an object store
     * that is not atomic, so two writers could both commit one version and one commit would be lost. Refused before
     * anything is read, naming the catalog form that commits atomically on that storage.
     */
    private static void refuseRenamesOnObjectStore(IcebergTableRef ref, String what, String warehouse) {
        if (isObjectStore(ref.location())) {
            throw new SinkConfigException("invalid --sink 'iceberg:" + (ref.isPath() ? "" : "hadoop:") + ref.location()
                    + "': " + what + " commits by renaming its metadata file, which an object store does not do "
                    + "atomically, so two writers could both commit and one commit would be lost; put the table in a "
                    + "catalog that commits atomically (JDBC, REST) on that storage, e.g. "
                    + "iceberg:jdbc:sqlite:/data/catalog.db#db.orders with --sink-property warehouse=" + warehouse);
        }
    }

    private static boolean isObjectStore(String location) {
        return location.matches("(?i)^(s3a?|s3n|gs|abfss?|wasbs?|oss|cos)://.*");
    }

    private TableIdentifier identifier() {
        return TableIdentifier.of(Namespace.of(ref.namespace().toArray(String[]::new)), ref.table());
    }

    /** The table, if it exists. */
    Optional<Table> load() {
        try {
            if (paths != null) {
                return paths.exists(ref.location()) ? Optional.of(paths.load(ref.location())) : Optional.empty();
            }
            return Optional.of(catalog.loadTable(identifier()));
        } catch (NoSuchTableException e) {
            return Optional.empty();
        }
    }

    /** Creates the table, its namespace first where the catalog has namespaces. */
    Table create(Schema schema, PartitionSpec spec, Map<String, String> properties) {
        try {
            if (paths != null) {
                return paths.create(schema, spec, properties, ref.location());
            }
            if (catalog instanceof SupportsNamespaces ns && !ns.namespaceExists(identifier().namespace())) {
                try {
                    ns.createNamespace(identifier().namespace());
                } catch (AlreadyExistsException raced) {
                    // another writer created it first
                }
            }
            return catalog.createTable(identifier(), schema, spec, properties);
        } catch (AlreadyExistsException e) {
            throw new SinkException("another writer created the Iceberg table " + ref.shown() + " while this run was "
                    + "creating it; run again to write into it", e);
        }
    }

    /**
     * The directory a job's lock file goes beside, where the table is on a local filesystem: a path table's path, a
     * catalog table's location (or, before it exists, where a local warehouse would put it).
     */
    Optional<Path> localDirectory() {
        String location = location();
        if (location == null || isRemote(location)) {
            return Optional.empty();
        }
        return Optional.of(location.startsWith("file:") ? Path.of(java.net.URI.create(location))
                : Path.of(location).toAbsolutePath());
    }

    /** A lease on the table's location in an object store; no lock where neither a file nor a lease can be had. */
    AutoCloseable lease(String job) {
        String location = location();
        if (location == null || !ObjectStoreLease.applies(location, hadoop)) {
            return () -> { };
        }
        return ObjectStoreLease.acquire(location, hadoop, job);
    }

    private String location() {
        if (paths != null) {
            return ref.location();
        }
        Optional<Table> t = load();
        if (t.isPresent()) {
            return t.get().location();
        }
        // not created yet: where the JDBC and Hadoop catalogs will put it
        if (warehouse != null) {
            return warehouse.replaceAll("/+$", "") + "/" + String.join("/", ref.namespace()) + "/" + ref.table();
        }
        return stagedLocation();
    }

    /**
     * Where a catalog without a warehouse of ours (REST) would create the table: it says so for a staged create,
     * which is never committed. Its namespace is created for that, as creating the table would.
     */
    private String stagedLocation() {
        try {
            if (catalog instanceof SupportsNamespaces ns && !ns.namespaceExists(identifier().namespace())) {
                try {
                    ns.createNamespace(identifier().namespace());
                } catch (AlreadyExistsException raced) {
                    // another writer created it first
                }
            }
            return catalog.buildTable(identifier(), new Schema(org.apache.iceberg.types.Types.NestedField.optional(1,
                    "staged", org.apache.iceberg.types.Types.StringType.get()))).createTransaction().table().location();
        } catch (RuntimeException e) {
            return null; // the catalog stages no create: no lock before the table exists
        }
    }

    private static boolean isRemote(String location) {
        return location.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*") && !location.startsWith("file:");
    }

    @Override
    public void close() {
        if (catalog instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                // closing a catalog's connections: nothing left to do
            }
        }
    }
}
