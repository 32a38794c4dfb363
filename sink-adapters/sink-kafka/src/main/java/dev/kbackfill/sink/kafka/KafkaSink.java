package dev.kbackfill.sink.kafka;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.version.Version;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Copies the final state of each key into a topic, exactly once: one Kafka transaction per batch holds the records,
 * the job's state (a record in the compacted topic {@value #JOB_TOPIC}) and, on the source's own cluster, the
 * source offsets committed to the backfill's own group {@code kbackfill-<job>} (never a live group). The
 * producer's {@code transactional.id} is {@code kbackfill-<job>}: a new run of the job fences an older one and
 * aborts whatever it left open.
 *
 * <p>Records keep the source key, value and headers, and gain headers naming the source topic, partition, offset
 * and timestamp. {@code newer-wins} and {@code insert-only} compare against an index of the target built by
 * reading it once before the run.
 */
final class KafkaSink implements Sink {

    static final String JOB_TOPIC = JobTopic.NAME;
    private static final Duration TIMEOUT = Topics.TIMEOUT;
    /** The store of its jobs: the job topic, and the job's transactional producer a batch's records are sent with. */
    private final JobTopic jobs;

    private final SinkSettings settings;
    private final String topic;
    private final Map<String, Object> config;
    private final List<String> warnings = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private TargetIndex index;
    /** Per partition of the target, the offset the index has read it to. */
    private Map<Integer, Long> indexedTo = new HashMap<>();
    /** Whether the index has read what the target gained between the sink's opening and its first write. */
    private boolean caughtUp;
    /** The partitions of a target topic to create before the first record is written; 0 when it exists. */
    private int toCreate;

    KafkaSink(SinkSettings settings, String topic) {
        this.settings = settings;
        this.topic = topic;
        this.config = clusterConfig(settings);
        this.jobs = new JobTopic(settings, topic, config);
    }

    /** The client settings of the sink's cluster: its own ({@code --sink-bootstrap-server}), else the source's. */
    static Map<String, Object> clusterConfig(SinkSettings settings) {
        if (settings.clientConfig().isEmpty()) {
            return settings.source().clientConfig();
        }
        // settings of its own: the source's bootstrap servers unless given, and --connect-timeout holds for the
        // sink's cluster too (an unreachable one fails in seconds, not a minute)
        Map<String, Object> config = new java.util.HashMap<>(settings.clientConfig());
        Map<String, Object> source = settings.source().clientConfig();
        for (String inherited : List.of("bootstrap.servers", "default.api.timeout.ms", "request.timeout.ms")) {
            if (source.containsKey(inherited)) {
                config.putIfAbsent(inherited, source.get(inherited));
            }
        }
        return Map.copyOf(config);
    }

    /** Records are copied as they are: key, value, headers and timestamp of the raw record. */
    @Override
    public boolean copiesSourceRecords() {
        return true;
    }

    /** Its jobs' state, in the job topic of its cluster, committed in the transactions of its batches. */
    @Override
    public JobStore jobStore() {
        return jobs;
    }

    @Override
    public String target() {
        return jobs.store(); // the target topic on its cluster, where its jobs are looked for too
    }

    @Override
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    @Override
    public List<String> notes() {
        return List.copyOf(notes);
    }

    @Override
    public void open() {
        if (settings.tombstoneMode() == TombstoneMode.SOFT_DELETE) {
            throw new SinkConfigException("--on-tombstone soft-delete has no meaning for a topic: use delete (tombstones "
                    + "pass through) or ignore");
        }
        jobs.openForJobs();
        Admin admin = jobs.admin();
        try {
            TopicDescription target = Topics.describe(admin, topic);
            int sourcePartitions = sourcePartitions();
            if (target == null) {
                if (!settings.createTable()) {
                    throw new SinkConfigException("topic " + topic + " does not exist at " + config.get("bootstrap.servers")
                            + "; create it, or pass --create-topic to create it compacted with the source's "
                            + sourcePartitions + " partitions");
                }
                // created with the first record written: a run that writes nothing (a first batch that fails, an
                // empty range) leaves no topic behind
                toCreate = sourcePartitions;
                notes.add("topic " + topic + " does not exist: it is created compacted, with the source's "
                        + sourcePartitions + " partitions, when the first record is written");
                return;
            } else {
                Config c = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, topic))).all()
                        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).values().iterator().next();
                String policy = c.get(TopicConfig.CLEANUP_POLICY_CONFIG).value();
                if (!policy.contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
                    warnings.add("topic " + topic + " has cleanup.policy=" + policy + ", not compact: older values of a key "
                            + "stay until retention removes them, so readers of the whole topic see every version");
                }
            }
            if (target.partitions().size() != sourcePartitions) {
                warnings.add("topic " + topic + " has " + target.partitions().size() + " partitions and the source "
                        + sourcePartitions + ": keys land in the target's partitions by the producer's partitioner (hash of "
                        + "the key), not in the source's partition numbers");
            }
            if (settings.conflictMode() != ConflictMode.OVERWRITE) {
                long started = System.nanoTime();
                index = buildIndex(target);
                long ms = (System.nanoTime() - started) / 1_000_000;
                notes.add(index.onDisk()
                        ? "indexed the " + index.records() + " records of topic " + topic + " in " + ms + " ms for "
                                + "--on-conflict " + settings.conflictMode().label() + ", on disk in "
                                + index.spillDirectory() + " (more keys than the memory budget of " + indexMemoryKeys()
                                + ")"
                        : "indexed the " + index.size() + " keys of topic " + topic + " in " + ms + " ms for "
                                + "--on-conflict " + settings.conflictMode().label());
            }
        } catch (ExecutionException | java.util.concurrent.TimeoutException | InterruptedException e) {
            throw failed("prepare", e);
        }
    }

    /**
     * The failure to {@code doing} (prepare, create, read) the target topic: an admin or client future's cause, or
     * the timeout or interruption itself.
     */
    private SinkException failed(String doing, Exception e) {
        String where = "cannot " + doing + " topic " + topic + " at " + config.get("bootstrap.servers") + ": ";
        return e instanceof ExecutionException ? new SinkException(where + e.getCause().getMessage(), e.getCause())
                : new SinkException(where + e, e);
    }

    /** Creates the target topic ({@code --create-topic}) before its first record, and indexes it (empty). */
    private void createTarget() {
        try {
            jobs.admin().createTopics(List.of(new NewTopic(topic, Optional.of(toCreate), Optional.empty())
                    .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))))
                    .all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                throw failed("create", e);
            }
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            throw failed("create", e);
        }
        try {
            TopicDescription target = Topics.await(jobs.admin(), topic);
            if (settings.conflictMode() != ConflictMode.OVERWRITE) {
                index = buildIndex(target);
            }
        } catch (ExecutionException | java.util.concurrent.TimeoutException | InterruptedException e) {
            throw failed("prepare", e);
        }
        toCreate = 0;
    }

    /**
     * Reads the target topic once (read-committed), keeping per key its last record's version and value digest: a
     * reader of the compacted topic sees that record. A record kbackfill did not write has only its timestamp as
     * version; values compare by their bytes, as the sink copies them.
     */
    @Override
    public dev.kbackfill.core.verify.TargetLookup verifier() {
        TargetIndex idx;
        try {
            TopicDescription target = Topics.describe(jobs.admin(), topic);
            if (target == null) {
                throw new SinkConfigException("topic " + topic + " does not exist at " + config.get("bootstrap.servers")
                        + ": nothing to verify");
            }
            idx = buildIndex(target, true);
        } catch (ExecutionException | java.util.concurrent.TimeoutException | InterruptedException e) {
            throw failed("read", e);
        }
        return new dev.kbackfill.core.verify.TargetLookup() {
            @Override
            public Map<dev.kbackfill.core.record.KeyIdentity, dev.kbackfill.core.verify.TargetRow> lookup(
                    List<Change> expected, String sourceTopic,
                    java.util.function.Function<Change, Map<String, Object>> values) {
                Map<dev.kbackfill.core.record.KeyIdentity, dev.kbackfill.core.verify.TargetRow> found = new HashMap<>();
                for (Change c : expected) {
                    if (c.source() == null || c.source().key() == null) {
                        continue;
                    }
                    TargetIndex.Stamp s = idx.stamp(c.source().key());
                    if (s == null) {
                        continue;
                    }
                    dev.kbackfill.core.version.Version v = s.version();
                    if (v.topic() != null && v.topic().isEmpty()) {
                        v = new dev.kbackfill.core.version.Version(null, v.partition(), v.offset(), v.timestamp(),
                                v.logTime(), v.field());
                    }
                    boolean same = c.isTombstone() || s.digest() == TargetIndex.digest(c.source().value());
                    found.put(dev.kbackfill.core.record.KeyIdentity.of(c.key()), s.deleted()
                            ? dev.kbackfill.core.verify.TargetRow.deleted(v)
                            : dev.kbackfill.core.verify.TargetRow.live(v, same ? Map.of() : shownValue(s),
                            same ? List.of() : List.of(dev.kbackfill.core.verify.TargetRow.RECORD_VALUE)));
                }
                return found;
            }

            /** Target values read for people so far: each costs a fetch, so a few samples' worth. */
            private int shown;

            /** The target record's value as a person reads it (up to a sample's worth), else its length. */
            private Map<String, Object> shownValue(TargetIndex.Stamp s) {
                Object value = "(a value of " + ((s.digest() >>> 32) - 1) + " bytes)";
                if (shown < SHOWN_VALUES && s.targetPartition() >= 0) {
                    shown++;
                    Optional<byte[]> read = targetValue(s.targetPartition(), s.targetOffset());
                    if (read.isPresent()) {
                        value = dev.kbackfill.core.record.Readable.bytes(read.get());
                    }
                }
                Map<String, Object> values = new HashMap<>();
                values.put(dev.kbackfill.core.verify.TargetRow.RECORD_VALUE, value);
                return values;
            }

            @Override
            public long rowsRead() {
                return idx.records();
            }

            @Override
            public void close() {
                idx.close();
            }
        };
    }

    /** Target values verification reads to show a person (the first samples' worth of differing keys). */
    private static final int SHOWN_VALUES = 20;

    /** The value of the target's record at {@code partition} and {@code offset}, or empty where it is gone. */
    private Optional<byte[]> targetValue(int partition, long offset) {
        try (dev.kbackfill.core.read.RecordFetch fetch = new dev.kbackfill.core.read.RecordFetch(config,
                IsolationLevel.READ_COMMITTED, topic)) {
            return fetch.fetch(partition, offset, 0).map(SourceRecord::value);
        } catch (RuntimeException e) {
            return Optional.empty(); // shown by its length only
        }
    }

    /** An admin client only: the job topic is not created. */
    @Override
    public void openForVerify() {
        jobs.admin();
    }

    private int sourcePartitions() throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        try (Admin source = Admin.create(Topics.adminOnly(settings.source().clientConfig().isEmpty() ? config
                : settings.source().clientConfig()))) {
            TopicDescription d = Topics.describe(source, settings.source().topic());
            return d == null ? 1 : d.partitions().size();
        }
    }

    /**
     * How many keys the index keeps in memory before it moves to disk: half the heap at about 200 bytes a key
     * ({@code kbackfill.kafkaSink.indexMemoryKeys} sets it, for tests and for tuning).
     */
    static long indexMemoryKeys() {
        String set = System.getProperty("kbackfill.kafkaSink.indexMemoryKeys");
        return set != null ? Long.parseLong(set) : Runtime.getRuntime().maxMemory() / 2 / 200;
    }

    /**
     * How long indexing waits for the target's open transactions to end: a commit's markers take milliseconds, a
     * transactional writer commits every so often; a transaction a killed run left open ends only when its job's lock
     * (taken after the sink is opened) aborts it, so this bound is what such a restart waits.
     */
    static final Duration SETTLE = Duration.ofSeconds(5);

    private TargetIndex buildIndex(TopicDescription target) throws InterruptedException, ExecutionException,
            java.util.concurrent.TimeoutException {
        return buildIndex(target, false);
    }

    /** @param digests keep each key's value digest ({@link TargetIndex#digest}), for verification */
    private TargetIndex buildIndex(TopicDescription target, boolean digests) throws InterruptedException,
            ExecutionException, java.util.concurrent.TimeoutException {
        TargetIndex idx = new TargetIndex(indexMemoryKeys(), Path.of(System.getProperty("java.io.tmpdir")));
        List<Integer> partitions = target.partitions().stream().map(p -> p.partition()).toList();
        try {
            List<BoundedReader.Range> ranges = settledRanges(partitions);
            readInto(idx, ranges, digests);
            if (!digests) {
                indexedTo = new HashMap<>();
                ranges.forEach(r -> indexedTo.put(r.partition(), r.end()));
            }
        } catch (RuntimeException e) {
            idx.close();
            throw e;
        }
        return idx;
    }

    /** The target's partitions from their log start to their last stable offset, its open transactions warned of. */
    private List<BoundedReader.Range> settledRanges(List<Integer> partitions) throws InterruptedException,
            ExecutionException, java.util.concurrent.TimeoutException {
        Topics.Settled settled = Topics.settledRanges(jobs.admin(), partitions, topic, SETTLE);
        settled.open().forEach((p, from) -> {
            String warning = "topic " + topic + " partition " + p + " has a transaction open from offset " + from
                    + " that did not end within " + SETTLE.toSeconds() + " s (another writer's, or one a stopped run "
                    + "left, which the job's lock aborts): its records are not indexed, so the version rule cannot see "
                    + "them";
            if (!warnings.contains(warning)) {
                warnings.add(warning);
            }
        });
        return settled.ranges();
    }

    private void readInto(TargetIndex idx, List<BoundedReader.Range> ranges, boolean digests)
            throws InterruptedException {
        try (BoundedReader reader = new BoundedReader(topic, config, IsolationLevel.READ_COMMITTED, ranges, false,
                Duration.ofMinutes(2))) {
            reader.read((records, positions, lost) -> {
                for (SourceRecord r : records) {
                    idx.add(r.key(), r.value() == null, r.timestamp(), r.headers(),
                            digests ? TargetIndex.digest(r.value()) : 0, r.partition(), r.offset());
                }
                idx.flush();
            });
        }
    }

    /**
     * Reads into the index what the target gained since it was indexed at open, once, at the first write: the sink is
     * opened before the job's lock is taken, and a run of the job still going then (which the lock fences) may have
     * committed batches meanwhile. Without them, the version rule would see their keys as the index left them: an
     * older record could replace a newer one, insert-only could write a key twice.
     */
    private void catchUp() {
        caughtUp = true;
        if (index == null) {
            return;
        }
        try {
            List<BoundedReader.Range> since = new ArrayList<>();
            for (BoundedReader.Range r : settledRanges(new ArrayList<>(indexedTo.keySet()))) {
                long from = Math.max(r.start(), indexedTo.get(r.partition()));
                if (from < r.end()) {
                    since.add(new BoundedReader.Range(r.partition(), from, r.end()));
                }
                indexedTo.put(r.partition(), r.end());
            }
            if (!since.isEmpty()) {
                readInto(index, since, false);
            }
        } catch (ExecutionException | java.util.concurrent.TimeoutException | InterruptedException e) {
            throw failed("read", e);
        }
    }

    /** Whether the target topic holds a record without kbackfill's headers (another writer's), as indexed at open. */
    @Override
    public boolean holdsForeignRows() {
        return settings.conflictMode() == ConflictMode.NEWER_WINS && index != null && index.sawForeign();
    }

    @Override
    public WriteResult write(WriteBatch batch) {
        long[] counts = {0, 0, 0};
        Map<Integer, Long> keptOut = new java.util.TreeMap<>();
        if (toCreate > 0 && !batch.changes().isEmpty()) {
            createTarget(); // indexed now, under the job's lock
            caughtUp = true;
        }
        if (!caughtUp) {
            catchUp();
        }
        List<Change> written = new ArrayList<>();
        jobs.transaction(batch.job(), () -> {
            for (Change c : batch.changes()) {
                SourceRecord r = c.source();
                if (r == null) {
                    throw new IllegalStateException("the Kafka sink copies records: a change without its source record");
                }
                boolean tombstone = r.value() == null;
                if (tombstone && settings.tombstoneMode() == TombstoneMode.IGNORE) {
                    counts[2]++;
                    continue;
                }
                if (tombstone && settings.conflictMode() == ConflictMode.INSERT_ONLY) {
                    counts[2]++; // insert-only never applies tombstones
                    continue;
                }
                if (!allowed(c, batch)) {
                    keptOut.merge(r.partition(), 1L, Long::sum);
                    continue;
                }
                RecordHeaders headers = new RecordHeaders(r.headers().toArray());
                headers.add(TargetIndex.SOURCE_TOPIC, r.topic().getBytes(StandardCharsets.UTF_8));
                headers.add(TargetIndex.SOURCE_PARTITION, Integer.toString(r.partition()).getBytes(StandardCharsets.UTF_8));
                headers.add(TargetIndex.SOURCE_OFFSET, Long.toString(r.offset()).getBytes(StandardCharsets.UTF_8));
                headers.add(TargetIndex.SOURCE_TIMESTAMP, Long.toString(r.timestamp()).getBytes(StandardCharsets.UTF_8));
                headers.add(TargetIndex.SOURCE_LOG_TIME, Long.toString(r.logTime()).getBytes(StandardCharsets.UTF_8));
                if (c.versionField() != null) {
                    headers.add(TargetIndex.SOURCE_VERSION, TargetIndex.versionHeader(c.versionField()));
                }
                jobs.producer().send(new ProducerRecord<>(topic, null, r.timestamp(), r.key(), r.value(), headers));
                written.add(c);
                counts[tombstone ? 1 : 0]++;
            }
            // the records are appended: a live writer's record appended before them was consumed from a source
            // record the log holds now; one appended after them is later in the topic, and compaction keeps it
            batch.recheckBeforeCommit();
            jobs.advance(batch.job(), batch.nextOffsets());
        });
        if (index != null) {
            for (Change c : written) {
                SourceRecord r = c.source();
                index.written(r.key(), r.topic(), r.partition(), r.offset(), r.timestamp(), r.logTime(), r.value() == null,
                        c.versionField());
            }
            index.flush();
        }
        return new WriteResult(counts[0], counts[1], counts[2], keptOut);
    }

    /** Whether the target takes the record: by the version rule under newer-wins, absent keys under insert-only. */
    private boolean allowed(Change c, WriteBatch batch) {
        SourceRecord r = c.source();
        return switch (settings.conflictMode()) {
            case OVERWRITE -> true;
            case INSERT_ONLY -> index.absent(r.key());
            case NEWER_WINS -> index.newerWins(r.key(), new Version(r.topic(), r.partition(), r.offset(), r.timestamp(),
                    r.logTime(), c.versionField()), batch.foreignRows());
        };
    }

    @Override
    public void close() {
        if (index != null) {
            index.close();
            index = null;
        }
        jobs.close();
    }
}
