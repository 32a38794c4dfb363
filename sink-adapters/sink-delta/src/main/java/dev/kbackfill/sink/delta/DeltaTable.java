package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.ObjectStoreLease;
import dev.kbackfill.sink.lake.ValueMismatch;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.sink.JobLockFile;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.core.sink.RecordRejectedException;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.sink.lake.KeyOrder;
import dev.kbackfill.sink.lake.KeyedBatch;
import dev.kbackfill.sink.lake.LakeRows;
import dev.kbackfill.sink.lake.LakeType;
import dev.kbackfill.sink.lake.MetadataOrdinals;
import dev.kbackfill.sink.lake.LakeSink;
import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.TransactionCommitResult;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.ConcurrentWriteException;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.hook.PostCommitHook;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import org.apache.hadoop.conf.Configuration;
import org.roaringbitmap.RoaringBitmap;

/**
 * Keyed upserts into a Delta table with Delta Kernel. Each batch: find the files that may hold the batch's keys (the
 * first key column's min/max statistics), stream their key and metadata columns keeping only the rows of incoming
 * keys, decide each key under the conflict and tombstone modes, and commit in <em>one</em> commit the batch's rows
 * as new files sorted by key, the rows they replace or delete taken out of their files, a
 * {@code txn(appId = kbackfill-<job>)} and the job's state in the domain metadata {@code kbackfill.job.<job>}. A
 * crash leaves either the whole batch with its progress or neither.
 *
 * <p>Rows are taken out with deletion vectors where the table enables them ({@code delta.enableDeletionVectors},
 * set on tables kbackfill creates): the file is re-added with a vector marking them, so a batch writes what it
 * changes, not the files it touches. On other tables each touched file is copied without them (copy-on-write),
 * streamed batch by batch. Memory follows the batch, not the table.
 *
 * <p>Single writer per job: a lock file beside a local table, a lease object in S3 ({@link ObjectStoreLease}). Kernel
 * does not check what a concurrent writer read, so a commit is never retried blindly: one refused because another
 * writer (another job, {@code kbackfill compact}) committed first is planned again from the table as it is then. On
 * S3 the log's commits are conditional puts ({@link ConditionalPutLogStore}), so of two writers of one version one is
 * refused, never lost.
 */
final class DeltaTable implements LakeSink.Table {

    /** The data files the last batch probed (for tests of its pruning). */
    int probedFiles;

    private static final String ENGINE_INFO = "kbackfill";
    private static final int ROWS_PER_FILE_BATCH = 50_000;

    private final SinkSettings settings;
    private final String path;
    private final SinkSettings.MetadataColumns meta;
    /** The table's schema: what it must be for kbackfill to write it, checked there. */
    private final DeltaTableSchema tableSchema;
    private Engine engine;
    private Configuration hadoop;
    /** The job's lease on a table in S3 while this sink holds it; checked before every commit. */
    private volatile ObjectStoreLease lease;
    private final List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The table as the last commit of this sink left it: one writer per table, so no log replay per batch. */
    private Snapshot latest;
    /** The keys this sink wrote since it created the table, while every commit since was its own. */
    private final dev.kbackfill.sink.lake.OwnWrites own = dev.kbackfill.sink.lake.OwnWrites.forThisHeap();
    /** The version of the table this sink created, empty. */
    private long created = -1;

    DeltaTable(SinkSettings settings, String path) {
        this.settings = settings;
        this.path = path;
        this.meta = settings.metadata();
        this.tableSchema = new DeltaTableSchema(settings, path);
    }

    /** The domain that holds {@code job}'s state. */
    static String domain(String job) {
        return "kbackfill.job." + job;
    }

    @Override
    public String target() {
        return "delta:" + path;
    }

    @Override
    public String shown() {
        return "the Delta table at " + path;
    }

    /**
     * The job's state lives in the table itself, so the table needs no name here: a path spelled another way (relative,
     * through a link) is the same table, and another table holds no state of the job.
     */
    @Override
    public String destination() {
        return "the Delta table";
    }

    /**
     * Every commit rewrites the files its keys live in, so fewer, larger batches write far less. A batch holds one
     * decoded row per key (about 0.75 KB for ten fields) and a run holds two batches: the 1M-record benchmark
     * (200k keys) commits once and ran in -Xmx384m; -Xmx1g is what docs/sinks/delta.md asks for.
     */
    @Override
    public int defaultBatchRows() {
        return 250_000;
    }

    @Override
    public void connect() {
        if (engine == null) {
            hadoop = DeltaFiles.hadoopConfiguration(settings.clientConfig());
            engine = DefaultEngine.create(hadoop);
        }
    }

    @Override
    public boolean exists() {
        return snapshot().isPresent();
    }

    @Override
    public List<String> check() {
        return tableSchema.check(snapshot().orElseThrow());
    }

    /**
     * Whether a data file holds a row without an offset (or the table no offset column, and a row), from the files'
     * statistics (their null counts): a file without statistics may, and counts as one that does.
     */
    @Override
    public boolean holdsForeignRows() {
        return DeltaDamage.FORMAT.reading(path, this::holdsRowsWithoutOffset);
    }

    private boolean holdsRowsWithoutOffset() {
        Optional<Snapshot> snapshot = snapshot();
        if (snapshot.isEmpty()) {
            return false;
        }
        StructType schema = snapshot.get().getSchema();
        int offset = schema.indexOf(meta.offset());
        String column = offset < 0 ? null : DeltaPruning.physicalName(schema, offset);
        try (io.delta.kernel.utils.CloseableIterator<io.delta.kernel.data.FilteredColumnarBatch> it =
                     snapshot.get().getScanBuilder().build().getScanFiles(engine, true)) {
            while (it.hasNext()) {
                try (io.delta.kernel.utils.CloseableIterator<Row> rows = it.next().getRows()) {
                    while (rows.hasNext()) {
                        Optional<String> stats = KernelInternals.statsJson(rows.next());
                        if (stats.isEmpty()) {
                            return true;
                        }
                        com.fasterxml.jackson.databind.JsonNode s = JSON.readTree(stats.get());
                        if (column == null ? s.path("numRecords").asLong(1) > 0
                                : !s.path("nullCount").has(column) || s.path("nullCount").path(column).asLong() > 0) {
                            return true;
                        }
                    }
                }
            }
            return false;
        } catch (IOException e) {
            throw new SinkException("cannot read the files of " + shown() + ": " + e.getMessage(), e);
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    @Override
    public void checkCreation() {
        DeltaTableCreation.checkProperties(path, settings, engine, ENGINE_INFO);
    }

    private Optional<Snapshot> snapshot() {
        if (latest != null) {
            return Optional.of(latest);
        }
        try {
            return Optional.of(DeltaDamage.FORMAT.reading(path, () -> TableManager.loadSnapshot(path).build(engine)));
        } catch (TableNotFoundException e) {
            return Optional.empty();
        }
    }

    @Override
    public AutoCloseable lock(String job) {
        Optional<Path> local = localPath();
        if (local.isPresent()) {
            return JobLockFile.acquire(JobLockFile.beside(local.get(), job), job, target());
        }
        if (!ObjectStoreLease.applies(path, hadoop)) {
            return () -> { }; // gs://, abfss://, hdfs://: their log stores make commits atomic; no job lock there
        }
        ObjectStoreLease taken = ObjectStoreLease.acquire(path, hadoop, job);
        lease = taken;
        return () -> {
            lease = null;
            taken.close();
        };
    }

    private Optional<Path> localPath() {
        if (path.startsWith("file:")) {
            return Optional.of(Path.of(java.net.URI.create(path)));
        }
        if (path.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
            return Optional.empty();
        }
        return Optional.of(Path.of(path).toAbsolutePath());
    }

    @Override
    public List<String> jobs() {
        return DeltaDamage.FORMAT.reading(path, () -> snapshot().map(s -> KernelInternals.domains(s).stream()
                .filter(d -> d.startsWith("kbackfill.job.")).map(d -> d.substring("kbackfill.job.".length())).sorted()
                .toList()).orElse(List.of()));
    }

    @Override
    public Optional<JobState> stored(String job) {
        return DeltaDamage.FORMAT.reading(path, () -> snapshot().flatMap(s -> s.getDomainMetadata(domain(job)))
                .map(JobStateJson::read));
    }

    /**
     * A job begun is committed as a batch of no rows would be (with the job's transaction id, enabling domain metadata
     * where a table allowed to gain it lacks it); a job reset, by a commit that removes its domain.
     */
    @Override
    public void commitStates(Map<String, JobState> states) {
        states.forEach((job, state) -> {
            Snapshot snapshot = snapshot().orElseThrow();
            if (state != null) {
                commitWithoutRows(snapshot, Optional.of(job), Map.of(domain(job), JobStateJson.write(state)), Set.of());
            } else {
                commitWithoutRows(snapshot, Optional.empty(), Map.of(), Set.of(domain(job)));
            }
        });
    }

    /**
     * Whether this process can commit the job's state to the table: Kernel can commit to it, or an engine that writes
     * its rows does ({@link DeltaStateCommits}); otherwise the engine's driver stores the state it is launched with.
     */
    @Override
    public boolean commitsStatesHere() {
        return snapshot().map(s -> KernelInternals.unwritableFeatures(s).isEmpty()
                || DeltaStateCommits.find().isPresent()).orElse(true);
    }

    @Override
    public long forgetDeletesBefore(long millis) {
        Snapshot snapshot = snapshot().orElseThrow();
        DeltaTombstones ledger = new DeltaTombstones(snapshot);
        long forgotten = ledger.forgetBefore(millis);
        if (forgotten > 0) {
            commitWithoutRows(snapshot, Optional.empty(), ledger.domains(), Set.of());
        }
        return forgotten;
    }

    /** Reads the table's latest snapshot back, probing only the files that may hold the range's keys. */
    @Override
    public dev.kbackfill.core.verify.TargetLookup verifier() {
        Snapshot snapshot;
        try {
            // the latest, whoever committed it
            snapshot = DeltaDamage.FORMAT.reading(path, () -> TableManager.loadSnapshot(path).build(engine));
        } catch (TableNotFoundException e) {
            throw new SinkConfigException("no Delta table at " + path + ": nothing to verify");
        }
        return new DeltaTargetLookup(engine, snapshot, settings, path);
    }

    @Override
    public void refresh() {
        latest = null;
        own.forget();
    }

    @Override
    public WriteResult write(WriteBatch batch, JobState after) {
        return DeltaDamage.FORMAT.reading(path, () -> writeOnce(batch, after));
    }

    private WriteResult writeOnce(WriteBatch batch, JobState after) {
        Snapshot snapshot = snapshot().orElseGet(() -> create(batch));
        Optional<StructType> evolved = tableSchema.evolved(snapshot, batch);
        if (evolved.isPresent()) {
            snapshot = evolve(snapshot, evolved.get());
        }
        StructType schema = snapshot.getSchema();
        tableSchema.check(snapshot, batch);
        try {
            return apply(snapshot, schema, batch, after);
        } catch (ValueMismatch e) {
            throw new SinkException("type mismatch writing batch " + batch.sequence() + " into " + path + ": "
                    + e.getMessage() + "; nothing of this batch was written", e);
        } catch (IOException e) {
            throw new SinkException("writing batch " + batch.sequence() + " into " + path + " failed: " + e.getMessage()
                    + "; nothing of this batch was committed", e);
        }
    }

    /**
     * Creates the table from the first batch's columns, the metadata columns last, domain metadata enabled, columns
     * mapped and types allowed to widen (so that it can take columns and widen them later), partitioned as
     * {@code --partition-by} says.
     */
    private Snapshot create(WriteBatch batch) {
        StructType schema = DeltaTableCreation.schema(batch, settings);
        Transaction txn = TableManager.buildCreateTableTransaction(path, schema, ENGINE_INFO)
                .withTableProperties(DeltaTableCreation.properties(batch.shape().keyColumns(), settings))
                .withDataLayoutSpec(DeltaTableCreation.layout(schema, settings, path))
                .withMaxRetries(0).build(engine);
        TransactionCommitResult result = txn.commit(engine, CloseableIterable.emptyIterable());
        runHooks(result);
        created = result.getVersion();
        latest = null;
        return snapshot().orElseThrow();
    }

    /**
     * Commits a schema change (columns added, types widened) on its own, just before the batch that needs it: a batch
     * that then fails leaves a column NULL in every row, and the rerun finds it. Kernel keeps the existing columns'
     * physical names and ids, and gives new ones theirs.
     */
    private Snapshot evolve(Snapshot snapshot, StructType schema) {
        Transaction txn = snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.MANUAL_UPDATE)
                .withUpdatedSchema(schema).withMaxRetries(0).build(engine);
        try {
            TransactionCommitResult result = txn.commit(engine, CloseableIterable.emptyIterable());
            runHooks(result);
            committed(snapshot, result.getVersion(), List.of(), new int[0]);
        } catch (ConcurrentWriteException | io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException e) {
            latest = null;
            throw new LakeSink.Stale("another writer committed to " + path + " while kbackfill changed its schema: "
                    + e.getMessage(), e);
        }
        latest = null;
        return snapshot().orElseThrow();
    }

    /**
     * One file the batch may touch. Its key and metadata columns are streamed once ({@code probe}) and only the rows
     * holding an incoming key are kept ({@code hits}, with their positions in the file), enough to decide every
     * incoming key; the file's other columns are read only for rows soft-deleted by the batch (a soft delete keeps
     * the stored values), and its other rows only to copy them on a table without deletion vectors.
     */
    private static final class Candidate {
        final Row scanFile;
        final List<Object[]> hits = new ArrayList<>();
        final List<Long> positions = new ArrayList<>();
        /** The file's live rows. */
        long rows;
        /** The hits the batch replaces or deletes. */
        final java.util.BitSet replaced = new java.util.BitSet();
        /** Hits soft-deleted by the batch, with the tombstone that did it. */
        final Map<Integer, Change> softDeleted = new HashMap<>();
        int touched;

        Candidate(Row scanFile) {
            this.scanFile = scanFile;
        }

        boolean dirty() {
            return touched > 0 || !softDeleted.isEmpty();
        }

        /** Whether every live row is replaced or deleted, so that nothing of the file is kept. */
        boolean wholeReplaced() {
            return touched == rows && softDeleted.isEmpty();
        }

        /** The positions of the rows the batch takes out of this file (replaced, deleted or soft-deleted). */
        RoaringBitmap dropped() {
            RoaringBitmap p = new RoaringBitmap();
            for (int i = 0; i < hits.size(); i++) {
                if (replaced.get(i) || softDeleted.containsKey(i)) {
                    p.add(Math.toIntExact(positions.get(i)));
                }
            }
            return p;
        }
    }

    private WriteResult apply(Snapshot snapshot, StructType schema, WriteBatch batch, JobState after)
            throws ValueMismatch, IOException {
        if (batch.changes().isEmpty()) {
            // progress only (a range with nothing left to write, an engine's wave written by its own commit)
            commitWithoutRows(snapshot, Optional.of(batch.job()), Map.of(domain(batch.job()), JobStateJson.write(after)),
                    Set.of());
            return new WriteResult(0, 0, 0, Map.of());
        }
        List<String> keyNames = batch.shape().keyColumns().stream().map(Column::name).toList();
        int[] keyOrdinals = keyNames.stream().mapToInt(schema::indexOf).toArray();
        LakeRows lakeRows = rows(schema, keyOrdinals);
        MetadataOrdinals ord = MetadataOrdinals.of(schema::indexOf, meta);
        Map<Integer, Long> collided = new TreeMap<>();
        DeltaTombstones ledger = new DeltaTombstones(snapshot);
        KeyedBatch<int[]> decisions = new KeyedBatch<>(settings, ord, ledger, lakeRows, this::refused);
        Map<List<Object>, Change> incoming = decisions.byKey(batch, collided);
        Scan scan = snapshot.getScanBuilder().build();
        // where every row of the table is one this sink wrote, keys it never wrote have none
        List<Candidate> candidates = probe(snapshot, scan, schema, keyOrdinals, lakeRows, ord,
                own.toProbe(snapshot.getVersion(), incoming.keySet(), keyOrdinals));
        Map<List<Object>, int[]> located = new HashMap<>();
        for (int f = 0; f < candidates.size(); f++) {
            List<Object[]> hits = candidates.get(f).hits;
            for (int h = 0; h < hits.size(); h++) {
                located.put(keyOf(hits.get(h), keyOrdinals), new int[] {f, h});
            }
        }
        Map<List<Object>, KeyedBatch.Stored<int[]>> found = new HashMap<>();
        located.forEach((k, at) -> found.put(k, new KeyedBatch.Stored<>(candidates.get(at[0]).hits.get(at[1]), at)));
        List<Object[]> newRows = new ArrayList<>();
        WriteResult result = decisions.decide(batch, incoming, found, collided,
                new KeyedBatch.Effects<>() {
                    @Override
                    public void takeOut(int[] at) {
                        Candidate file = candidates.get(at[0]);
                        file.replaced.set(at[1]);
                        file.touched++;
                    }

                    @Override
                    public void softDelete(int[] at, Change c) {
                        candidates.get(at[0]).softDeleted.put(at[1], c); // marked once the stored values are read
                    }
                }, newRows);
        Changed changed = changedFiles(snapshot, scan, candidates, schema, batch, ord, newRows);
        KeyOrder.sortByKey(newRows, keyOrdinals);
        long made = commit(snapshot, batch.job(), after, newRows, changed.actions(), changed.copied(),
                changed.scanState(), changed.vectors(), schema, ledger);
        committed(snapshot, made, incoming.keySet(), keyOrdinals);
        return result;
    }

    /**
     * The candidate files for the batch's keys (pruned by their statistics and partitions), each probed for where
     * those keys live: the key, the version columns, and the column of the version field where a row of another
     * writer holds it. One file per core at a time: probing is most of a small batch's work on a large table.
     */
    private List<Candidate> probe(Snapshot snapshot, Scan scan, StructType schema, int[] keyOrdinals, LakeRows lakeRows,
                                  MetadataOrdinals ord, Set<List<Object>> keys) throws IOException {
        if (keys.isEmpty()) {
            probedFiles = 0;
            return List.of();
        }
        int[] read = java.util.stream.IntStream.concat(java.util.Arrays.stream(ord.present()),
                java.util.stream.IntStream.of(lakeRows.ownVersionFieldOrdinal(settings.versionField(),
                        settings.mapping()))).toArray();
        Row probeState = snapshot.getScanBuilder().withReadSchema(probeSchema(schema, keyOrdinals, read))
                .build().getScanState(engine);
        List<java.util.concurrent.Callable<Candidate>> probes = new ArrayList<>();
        dev.kbackfill.sink.lake.KeyFilter wanted = dev.kbackfill.sink.lake.KeyFilter.of(keys);
        List<Row> candidateFiles = DeltaPruning.candidateFiles(engine, scan, schema, keyOrdinals,
                snapshot.getPartitionColumnNames(), keys);
        probedFiles = candidateFiles.size();
        for (Row scanFile : candidateFiles) {
            probes.add(() -> {
                Candidate file = new Candidate(scanFile);
                file.rows = DeltaFiles.scan(engine, probeState, scanFile, schema, keyOrdinals, wanted::wants,
                        (position, row) -> {
                            file.hits.add(row);
                            file.positions.add(position);
                        });
                return file;
            });
        }
        return dev.kbackfill.sink.lake.ParallelFiles.each(probes, Runtime.getRuntime().availableProcessors());
    }

    /** The commit's actions for the files a batch changes, those to copy, and what marking them needed. */
    private record Changed(List<Row> actions, List<Candidate> copied, Row scanState, DeletionVectors vectors) {
    }

    /**
     * The files the batch changes: removed, then marked in deletion vectors where the table has them, or copied
     * without the rows it takes out; the rows it soft-deletes read and added to {@code newRows} marked deleted.
     */
    private Changed changedFiles(Snapshot snapshot, Scan scan, List<Candidate> candidates, StructType schema,
                                 WriteBatch batch, MetadataOrdinals ord, List<Object[]> newRows) throws IOException {
        boolean vectors = DeletionVectors.enabled(snapshot);
        Row scanState = null;
        List<Row> actions = new ArrayList<>();
        DeletionVectors dvs = null;
        List<Candidate> copied = new ArrayList<>();
        for (Candidate f : candidates) {
            if (!f.dirty()) {
                continue;
            }
            if (scanState == null) {
                scanState = scan.getScanState(engine);
            }
            actions.add(KernelInternals.removeAction(f.scanFile, true));
            if (!f.softDeleted.isEmpty()) {
                softDeleteRows(f, scanState, schema, batch, ord, newRows);
            }
            if (f.wholeReplaced()) {
                continue;
            }
            if (vectors) {
                if (dvs == null) {
                    dvs = new DeletionVectors(KernelInternals.tableRoot(scanState), hadoop);
                }
                RoaringBitmap marked = KernelInternals.deletedPositions(engine, dvs.tableRoot(), f.scanFile);
                marked.or(f.dropped());
                actions.add(KernelInternals.addWithDeletionVector(f.scanFile, dvs.add(marked),
                        () -> DeltaFiles.physicalRows(hadoop, KernelInternals.status(f.scanFile).getPath())));
            } else {
                copied.add(f);
            }
        }
        return new Changed(actions, copied, scanState, dvs);
    }

    /** Reads the stored values of the file's rows the batch soft-deletes, marks them deleted and stamps them. */
    private void softDeleteRows(Candidate f, Row scanState, StructType schema, WriteBatch batch, MetadataOrdinals ord,
                                List<Object[]> newRows) throws IOException {
        Map<Long, Change> byPosition = new HashMap<>();
        f.softDeleted.forEach((hit, c) -> byPosition.put(f.positions.get(hit), c));
        int[] seen = {0};
        DeltaFiles.scan(engine, scanState, f.scanFile, schema, (position, row) -> {
            Change c = byPosition.get(position);
            if (c != null) {
                row[ord.deleted()] = true;
                ord.stamp(row, c, batch.topic());
                newRows.add(row);
                seen[0]++;
            }
        });
        if (seen[0] != byPosition.size()) {
            throw new LakeSink.Stale("a data file of " + path + " changed while job " + batch.job()
                    + " was reading it (" + seen[0] + " of " + byPosition.size() + " rows to soft-delete found again)", null);
        }
    }

    /** The key columns and the metadata columns the table has: what deciding a batch needs. */
    private static StructType probeSchema(StructType schema, int[] keyOrdinals, int... metadataOrdinals) {
        java.util.SortedSet<Integer> ordinals = new TreeSet<>();
        for (int o : keyOrdinals) {
            ordinals.add(o);
        }
        for (int o : metadataOrdinals) {
            if (o >= 0) {
                ordinals.add(o);
            }
        }
        StructType probe = new StructType();
        for (int o : ordinals) {
            probe = probe.add(schema.at(o));
        }
        return probe;
    }

    /** A change whose values the table cannot hold: a poison record, named; nothing of its batch is committed. */
    private RecordRejectedException refused(Change c, ValueMismatch e) {
        return new RecordRejectedException(c, "the Delta table at " + path + " cannot hold it: " + e.getMessage()
                + (e.widens().isPresent() ? " (Delta Kernel cannot widen a column: the table must change outside "
                + "kbackfill)" : "") + "; nothing of its batch was written", e);
    }

    /** The table's rows as this sink builds them from changes, for the key columns at {@code keyOrdinals}. */
    static LakeRows rows(StructType schema, int[] keyOrdinals) {
        int n = schema.length();
        LakeType[] types = new LakeType[n];
        Object[] shown = new Object[n];
        List<String> names = new ArrayList<>(n);
        boolean[] required = new boolean[n];
        for (int i = 0; i < n; i++) {
            names.add(schema.at(i).getName());
            types[i] = DeltaTypes.lakeTypeOrNull(schema.at(i).getDataType());
            shown[i] = schema.at(i).getDataType();
            required[i] = !schema.at(i).isNullable();
        }
        return new LakeRows(names, types, shown, keyOrdinals, required);
    }

    static List<Object> keyOf(Object[] row, int[] keyOrdinals) {
        return LakeRows.keyOf(row, keyOrdinals);
    }

    /**
     * A commit that adds no rows: domains set and removed, with the job's transaction id where it moves a job. Delta
     * Kernel commits it, or, to a table with features Kernel cannot write, the engine whose writer writes the table's
     * rows ({@link DeltaStateCommits}; refused where none is in this process).
     */
    private void commitWithoutRows(Snapshot snapshot, Optional<String> job, Map<String, String> domains,
                                   Set<String> removed) {
        List<String> unwritable = KernelInternals.unwritableFeatures(snapshot);
        if (unwritable.isEmpty()) {
            Transaction txn = job.isPresent() ? transaction(snapshot, job.get())
                    : snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.MANUAL_UPDATE).withMaxRetries(0)
                    .build(engine);
            domains.forEach(txn::addDomainMetadata);
            removed.forEach(txn::removeDomainMetadata);
            committed(snapshot, doCommit(txn, List.of(), job.orElse(null)), List.of(), new int[0]);
            return;
        }
        DeltaStateCommits commits = DeltaStateCommits.required(path, unwritable);
        checkLease();
        commits.commit(path, snapshot.getVersion(), domains, removed,
                job.map(j -> Map.entry(appId(j), nextTransactionVersion(snapshot, j))));
        latest = null;
        own.forget();
    }

    private static String appId(String job) {
        return "kbackfill-" + job;
    }

    private long nextTransactionVersion(Snapshot snapshot, String job) {
        return snapshot.getLatestTransactionVersion(engine, appId(job)).orElse(0L) + 1;
    }

    private void checkLease() {
        ObjectStoreLease held = lease;
        if (held != null) {
            held.check();
        }
    }

    /**
     * Commits a batch: the given actions (removes, files re-added with deletion vectors), the batch's rows as new
     * files, the copies of files changed on a table without deletion vectors (one writer per core, each file
     * streamed), the deletion vectors' file written first, the job's state and the tombstone ledger.
     */
    private long commit(Snapshot snapshot, String job, JobState state, List<Object[]> rows, List<Row> given,
                        List<Candidate> copied, Row scanState, DeletionVectors dvs, StructType schema,
                        DeltaTombstones ledger) throws IOException {
        Transaction txn = transaction(snapshot, job);
        txn.addDomainMetadata(domain(job), JobStateJson.write(state));
        ledger.addTo(txn);
        List<Row> actions = new ArrayList<>(given);
        actions.addAll(DeltaFiles.write(engine, txn, schema, rows, ROWS_PER_FILE_BATCH));
        List<java.util.concurrent.Callable<List<Row>>> copies = new ArrayList<>();
        for (Candidate f : copied) {
            RoaringBitmap dropped = f.dropped();
            copies.add(() -> DeltaFiles.copyExcept(engine, txn, scanState, f.scanFile, p -> dropped.contains((int) p)));
        }
        actions.addAll(DeltaFiles.inParallel(copies, Runtime.getRuntime().availableProcessors()));
        if (dvs != null && dvs.any()) {
            dvs.write();
        }
        return doCommit(txn, actions, job);
    }

    /** Follows {@link #own} after a commit of this sink's on {@code base} that made version {@code made}. */
    private void committed(Snapshot base, long made, java.util.Collection<List<Object>> keys, int[] keyOrdinals) {
        own.committed(base.getVersion(), base.getVersion() == created, made == base.getVersion() + 1, made, keys,
                keyOrdinals);
    }

    private Transaction transaction(Snapshot snapshot, String job) {
        var builder = snapshot.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE)
                .withTransactionId(appId(job), nextTransactionVersion(snapshot, job)).withMaxRetries(0);
        if (!KernelInternals.supportsDomainMetadata(snapshot)) {
            // allowed by --create-table (DeltaTableSchema#check): the job's state rides in domain metadata
            builder = builder.withTablePropertiesAdded(Map.of(DeltaTableSchema.DOMAIN_METADATA, "supported"));
        }
        return builder.build(engine);
    }

    /**
     * Commits {@code txn} with {@code actions}; {@code job} is the job it writes for, or null for a reset or the ledger.
     *
     * @return the version the commit made
     */
    private long doCommit(Transaction txn, List<Row> actions, String job) {
        checkLease();
        try {
            TransactionCommitResult result = txn.commit(engine, CloseableIterable.inMemoryIterable(
                    KernelInternals.iterator(actions)));
            runHooks(result);
            latest = result.getPostCommitSnapshot().orElse(null);
            return result.getVersion();
        } catch (ConcurrentWriteException | io.delta.kernel.exceptions.MaxCommitRetryLimitReachedException e) {
            latest = null;
            throw new LakeSink.Stale("another writer committed to " + path + " while " + (job == null ? "kbackfill"
                    : "job " + job) + " was writing: " + e.getMessage() + "; one writer per table (nothing of this batch was committed)", e);
        }
    }

    /**
     * Runs the post-commit hooks (checkpoints, checksums). The commit is durable before they run, so a hook that
     * fails does not fail the batch: the table is whole, only a checkpoint is missing; it is reported as a warning.
     */
    private void runHooks(TransactionCommitResult result) {
        warnings.addAll(runHooks(engine, result, path));
    }

    /** Runs a commit's post-commit hooks; what failed, for people (the commit stands: the next commit's try again). */
    static List<String> runHooks(Engine engine, TransactionCommitResult result, String path) {
        List<String> failed = new ArrayList<>();
        for (PostCommitHook hook : result.getPostCommitHooks()) {
            try {
                hook.threadSafeInvoke(engine);
            } catch (IOException | RuntimeException e) {
                failed.add("post-commit hook " + hook.getType() + " failed on " + path + " after commit version "
                        + result.getVersion() + " (the commit stands; the next commit's hooks try again): "
                        + e.getMessage());
            }
        }
        return failed;
    }

    @Override
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    @Override
    public void close() {
        engine = null;
    }

}
