package dev.kbackfill.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkContract;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.testservices.SharedS3;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

/**
 * The sink contract on tables of a real Iceberg REST catalog ({@link LoopbackRestCatalog}), {@code iceberg:rest:URI
 * #lake.orders}, read back through the REST catalog by Iceberg's generic reader: a local warehouse here, an
 * {@code s3a://} bucket of a real S3 API (S3Proxy) in {@link OnS3IT}.
 */
@Tag("iceberg")
abstract class IcebergRestCatalogIT extends SinkContract {

    private static final java.util.concurrent.atomic.AtomicInteger TABLES = new java.util.concurrent.atomic.AtomicInteger();
    /** One catalog process per class: starting one per test cost seconds each. */
    private static final Map<Class<?>, LoopbackRestCatalog> CATALOGS = new java.util.concurrent.ConcurrentHashMap<>();

    /** This test's table, in a namespace of its own. */
    private final String namespace = "lake" + TABLES.incrementAndGet();

    LoopbackRestCatalog catalog;

    /** The warehouse the catalog creates tables in. */
    abstract String warehouse();

    /** The filesystem settings of the warehouse (the server's and the sink's). */
    abstract Map<String, String> filesystem();

    @BeforeEach
    void startCatalog() throws Exception {
        catalog = CATALOGS.get(getClass());
        if (catalog == null) {
            Path db = java.nio.file.Files.createTempDirectory("kbackfill-rest").resolve("catalog.db");
            catalog = new LoopbackRestCatalog(db.toString(), warehouse(), filesystem());
            CATALOGS.put(getClass(), catalog);
        }
    }

    /** Stops the finished class's catalog only: the other classes' may still be in use (the classes run side by side). */
    @AfterAll
    static void stopCatalog(org.junit.jupiter.api.TestInfo finished) throws Exception {
        LoopbackRestCatalog c = CATALOGS.remove(finished.getTestClass().orElseThrow());
        if (c != null) {
            c.close();
        }
    }

    @Override
    protected SinkSettings settings(ConflictMode conflict, TombstoneMode tombstone, boolean create) {
        Map<String, Object> properties = new HashMap<>(filesystem());
        return new SinkSettings("iceberg:rest:" + catalog.uri() + "#" + namespace + ".orders", "orders",
                Optional.empty(), Optional.empty(), conflict, tombstone, create, false,
                SinkSettings.MetadataColumns.DEFAULT, properties, SinkSettings.Source.NONE, Map.of())
                .withVersionField(versionField);
    }

    @Override
    protected boolean supportsVersionField() {
        return true;
    }

    @Override
    protected List<String> rows() throws Exception {
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
        filesystem().forEach(conf::set);
        try (RESTCatalog rest = new RESTCatalog()) {
            rest.setConf(conf);
            rest.initialize("reader", Map.of("uri", catalog.uri()));
            TableIdentifier id = TableIdentifier.of(namespace, "orders");
            return rest.tableExists(id) ? IcebergTableRows.contractRows(rest.loadTable(id)) : List.of();
        }
    }

    /**
     * A rebuild written into the shadow branch of a REST catalog's table leaves main as it was until the publish,
     * which fast-forwards main to it and removes the branch.
     */
    @org.junit.jupiter.api.Test
    void aRebuildInTheShadowBranchIsPublishedOntoMainByAFastForward() throws Exception {
        try (Opened s = begun(ConflictMode.NEWER_WINS, TombstoneMode.DELETE)) {
            s.write(batch(1, Map.of(0, 2L), row("a", "old", "1", 0, 0), row("b", "old", "2", 0, 1)));
        }
        List<String> before = rows();
        SinkSettings main = settings(ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true);
        IcebergSinkFactory factory = new IcebergSinkFactory();
        try (dev.kbackfill.core.sink.Publication p = factory.publication(main)) {
            assertThat(p.prepare()).hasSize(1);
            assertThat(p.shadowExists()).isTrue();
            try (dev.kbackfill.core.sink.Sink shadow = factory.create(p.shadow())) {
                shadow.open();
                try (AutoCloseable lock = shadow.jobStore().lock("rebuild")) {
                    shadow.jobStore().begin(dev.kbackfill.core.sink.JobState.begin("rebuild", "fingerprint", 1, plan()));
                    List<dev.kbackfill.core.record.Change> changes = List.of(row("c", "new", "3", 0, 5));
                    shadow.write(new dev.kbackfill.core.sink.WriteBatch("rebuild", 1, 1, changes,
                            dev.kbackfill.core.record.RowShape.of(changes), Map.of(0, 6L), TOPIC));
                }
            }
            assertThat(rows()).as("main as it was while the branch is written").isEqualTo(before);
            assertThat(p.publish("rebuild")).isNotEmpty();
            assertThat(rows()).containsExactly("c=new/3@0:5");
            assertThat(p.shadowExists()).isFalse();
        }
    }

    /** A local warehouse. */
    static class LocalIT extends IcebergRestCatalogIT {
        private static final Path WAREHOUSE = temporary();

        private static Path temporary() {
            try {
                return java.nio.file.Files.createTempDirectory("kbackfill-rest-warehouse");
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        String warehouse() {
            return WAREHOUSE.toString();
        }

        @Override
        Map<String, String> filesystem() {
            return Map.of();
        }
    }

    /** A warehouse in a bucket of a real S3 API. */
    @Tag("s3")
    static class OnS3IT extends IcebergRestCatalogIT {
        private static final String BUCKET = SharedS3.standard().newBucket();

        @Override
        String warehouse() {
            return "s3a://" + BUCKET + "/warehouse";
        }

        @Override
        Map<String, String> filesystem() {
            return SharedS3.standard().s3aSettings();
        }

        /**
         * What S3 under a REST catalog changes: files written and read back, replays, deletes and their ledger, the
         * job's state in the snapshot, the lease; the rest of the contract runs on this catalog locally
         * ({@link LocalIT}) and on S3 without a catalog ({@code IcebergSinkContractOnS3IT}).
         */
        @Override
        protected boolean runs(String test) {
            return java.util.Set.of("upsertsLeaveTheLastStateOfEachKeyAndStoreProgressWithIt",
                    "replayingTheSameBatchChangesNothing", "aReplayOlderThanADeleteNeverBringsTheKeyBack",
                    "aFirstBatchOfOnlyDeletesStoresTheJobAndTheDeletesInANewDestination",
                    "aJobIsStoredWithItsSpecAndResetForgetsItButNotTheRows",
                    "aSecondRunOfTheSameJobIsRefusedWhileTheFirstHoldsIt",
                    "theSinkListsTheJobsItHoldsStateForAndForgetsAResetOne").contains(test);
        }
    }
}
