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
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.ClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

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
final class KafkaSink implements Sink, JobStore {

    static final String JOB_TOPIC = JobTopic.NAME;
    /** Where the jobs' states are, read back. */
    private final JobTopic jobTopic;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** How long a transaction that failed for no stated reason waits to see whether another run took the job over. */
    private static final Duration TAKE_OVER_WAIT = Duration.ofSeconds(10);

    private final SinkSettings settings;
    private final String topic;
    private final Map<String, Object> config;
    private final List<String> warnings = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private Admin admin;
    private boolean sameCluster;
    private TargetIndex index;
    /** The partitions of a target topic to create before the first record is written; 0 when it exists. */
    private int toCreate;
    private KafkaProducer<byte[], byte[]> producer;
    private JobState current;

    KafkaSink(SinkSettings settings, String topic) {
        this.settings = settings;
        this.topic = topic;
        this.config = settings.clientConfig().isEmpty() ? settings.source().clientConfig() : settings.clientConfig();
        this.jobTopic = new JobTopic(config, this::ranges, TIMEOUT);
    }

    /** Records are copied as they are: key, value, headers and timestamp of the raw record. */
    @Override
    public boolean copiesSourceRecords() {
        return true;
    }

    /** Its jobs are looked for where its rows go. */
    @Override
    public String store() {
        return target();
    }

    /** This sink keeps its jobs' state itself, beside its data. */
    @Override
    public JobStore jobStore() {
        return this;
    }

    @Override
    public String target() {
        return "kafka:" + topic + " at " + config.get("bootstrap.servers");
    }

    @Override
    public String destination() {
        return "topic " + topic;
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
        openForJobs();
        try {
            TopicDescription target = describe(admin, topic);
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
        } catch (ExecutionException e) {
            throw new SinkException("cannot prepare topic " + topic + " at " + config.get("bootstrap.servers") + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            throw new SinkException("cannot prepare topic " + topic + " at " + config.get("bootstrap.servers") + ": "
                    + e, e);
        }
    }

    /** Creates the target topic ({@code --create-topic}) before its first record, and indexes it (empty). */
    private void createTarget() {
        try {
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(toCreate), Optional.empty())
                    .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))))
                    .all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                throw new SinkException("cannot create topic " + topic + " at " + config.get("bootstrap.servers") + ": "
                        + e.getCause().getMessage(), e.getCause());
            }
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            throw new SinkException("cannot create topic " + topic + " at " + config.get("bootstrap.servers") + ": "
                    + e, e);
        }
        try {
            TopicDescription target = awaitTopic(topic);
            if (settings.conflictMode() != ConflictMode.OVERWRITE) {
                index = buildIndex(target);
            }
        } catch (ExecutionException e) {
            throw new SinkException("cannot prepare topic " + topic + " at " + config.get("bootstrap.servers") + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            throw new SinkException("cannot prepare topic " + topic + " at " + config.get("bootstrap.servers") + ": "
                    + e, e);
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
            TopicDescription target = describe(admin, topic);
            if (target == null) {
                throw new SinkConfigException("topic " + topic + " does not exist at " + config.get("bootstrap.servers")
                        + ": nothing to verify");
            }
            idx = buildIndex(target, true);
        } catch (ExecutionException e) {
            throw new SinkException("cannot read topic " + topic + " at " + config.get("bootstrap.servers") + ": "
                    + e.getCause().getMessage(), e.getCause());
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            throw new SinkException("cannot read topic " + topic + " at " + config.get("bootstrap.servers") + ": " + e, e);
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
        admin = dev.kbackfill.resolver.ClientConfigs.creating("--sink-bootstrap-server", config,
                () -> Admin.create(adminOnly(config)));
    }

    @Override
    public void openForJobs() {
        admin = dev.kbackfill.resolver.ClientConfigs.creating("--sink-bootstrap-server", config,
                () -> Admin.create(adminOnly(config)));
        try {
            if (describe(admin, JOB_TOPIC) == null) {
                try {
                    admin.createTopics(List.of(new NewTopic(JOB_TOPIC, Optional.of(1), Optional.empty())
                            .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))))
                            .all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                        throw e;
                    }
                }
                awaitTopic(JOB_TOPIC);
            }
            String targetCluster = admin.describeCluster().clusterId().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            sameCluster = settings.clientConfig().isEmpty() || sourceClusterId().equals(targetCluster);
        } catch (ExecutionException e) {
            throw new SinkException("cannot reach the sink's cluster: " + ClientConfigs.why(config, e.getCause()),
                    e.getCause());
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            throw new SinkException("cannot reach " + config.get("bootstrap.servers") + ": " + e, e);
        }
    }

    private String sourceClusterId() throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        if (settings.source().clientConfig().isEmpty()) {
            return "";
        }
        try (Admin source = Admin.create(adminOnly(settings.source().clientConfig()))) {
            return source.describeCluster().clusterId().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    private int sourcePartitions() throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        try (Admin source = Admin.create(adminOnly(settings.source().clientConfig().isEmpty() ? config
                : settings.source().clientConfig()))) {
            TopicDescription d = describe(source, settings.source().topic());
            return d == null ? 1 : d.partitions().size();
        }
    }

    private static Map<String, Object> adminOnly(Map<String, Object> c) {
        return ClientConfigs.only(c, AdminClientConfig.configNames());
    }

    private static TopicDescription describe(Admin admin, String name)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        try {
            return admin.describeTopics(List.of(name)).allTopicNames().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).get(name);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return null;
            }
            throw e;
        }
    }

    /** Waits until every partition of a new topic answers ListOffsets (producing earlier can wedge: KAFKA-15591). */
    private TopicDescription awaitTopic(String name) throws InterruptedException, ExecutionException,
            java.util.concurrent.TimeoutException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                TopicDescription d = describe(admin, name);
                if (d != null) {
                    Map<TopicPartition, OffsetSpec> q = new HashMap<>();
                    d.partitions().forEach(p -> q.put(new TopicPartition(name, p.partition()), OffsetSpec.latest()));
                    admin.listOffsets(q).all().get(5, TimeUnit.SECONDS);
                    return d;
                }
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(100);
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

    private TargetIndex buildIndex(TopicDescription target) throws InterruptedException, ExecutionException,
            java.util.concurrent.TimeoutException {
        return buildIndex(target, false);
    }

    /** @param digests keep each key's value digest ({@link TargetIndex#digest}), for verification */
    private TargetIndex buildIndex(TopicDescription target, boolean digests) throws InterruptedException,
            ExecutionException, java.util.concurrent.TimeoutException {
        TargetIndex idx = new TargetIndex(indexMemoryKeys(), Path.of(System.getProperty("java.io.tmpdir")));
        List<BoundedReader.Range> ranges = ranges(target.partitions().stream().map(p -> p.partition()).toList(), topic);
        try (BoundedReader reader = new BoundedReader(topic, config, IsolationLevel.READ_COMMITTED, ranges, false,
                Duration.ofMinutes(2))) {
            reader.read((records, positions, lost) -> {
                for (SourceRecord r : records) {
                    idx.add(r.key(), r.value() == null, r.timestamp(), r.headers(),
                            digests ? TargetIndex.digest(r.value()) : 0, r.partition(), r.offset());
                }
                idx.flush();
            });
        } catch (RuntimeException e) {
            idx.close();
            throw e;
        }
        return idx;
    }

    private List<BoundedReader.Range> ranges(List<Integer> partitions, String name) throws InterruptedException,
            ExecutionException, java.util.concurrent.TimeoutException {
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(p -> {
            earliest.put(new TopicPartition(name, p), OffsetSpec.earliest());
            latest.put(new TopicPartition(name, p), OffsetSpec.latest());
        });
        var starts = admin.listOffsets(earliest).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        var ends = admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                IsolationLevel.READ_COMMITTED)).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        List<BoundedReader.Range> ranges = new ArrayList<>();
        for (int p : partitions) {
            TopicPartition tp = new TopicPartition(name, p);
            ranges.add(new BoundedReader.Range(p, starts.get(tp).offset(), ends.get(tp).offset()));
        }
        return ranges;
    }

    /**
     * Starts the job's transactional producer: {@code initTransactions} fences any other run of the job and aborts
     * what it left open, so that {@link #load} then reads a settled state.
     */
    @Override
    public AutoCloseable lock(String job) {
        Map<String, Object> p = ClientConfigs.only(config, ProducerConfig.configNames());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "kbackfill-" + job);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "kbackfill-" + job);
        producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        try {
            producer.initTransactions();
        } catch (KafkaException e) {
            producer.close(Duration.ZERO);
            producer = null;
            throw new SinkException("cannot start the transactions of job " + job + " at " + config.get("bootstrap.servers")
                    + ": " + e.getMessage(), e);
        }
        return () -> {
            if (producer != null) {
                producer.close(Duration.ofSeconds(10));
                producer = null;
            }
        };
    }

    /** The job's transactional id, taken over from the launch (whose producer it fences; the launch writes nothing). */
    @Override
    public AutoCloseable joinLock(String job) {
        return lock(job);
    }

    @Override
    public Optional<JobState> load(String job) {
        String latest = jobTopic.latest(java.util.Set.of(job), "read the state of job " + job).get(job);
        current = latest != null ? JobStateJson.read(latest) : null;
        return Optional.ofNullable(current);
    }

    @Override
    public Map<String, JobState> loadAll(java.util.Collection<String> jobs) {
        Map<String, JobState> states = new java.util.HashMap<>();
        jobTopic.latest(new java.util.HashSet<>(jobs), "read the state of " + jobs.size() + " jobs")
                .forEach((name, json) -> states.put(name, JobStateJson.read(json)));
        return states;
    }

    @Override
    public boolean sharesJobStore() {
        return true; // one job topic per cluster
    }

    @Override
    public List<String> jobs() {
        return jobTopic.latest(null, "list the jobs").keySet().stream().sorted().toList();
    }

    @Override
    public void begin(JobState state) {
        transaction(state.job(), () -> sendJob(JobTopic.record(state.job(), JobStateJson.write(state))));
        current = state;
    }

    @Override
    public boolean reset(String job) {
        boolean existed = load(job).isPresent();
        if (producer == null) {
            throw new IllegalStateException("reset needs the job's lock");
        }
        transaction(job, () -> sendJob(JobTopic.record(job, null)));
        if (sameCluster) {
            try {
                admin.deleteConsumerGroups(List.of("kbackfill-" + job)).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException | java.util.concurrent.TimeoutException | InterruptedException e) {
                // no offsets committed yet: nothing to delete
            }
        }
        current = null;
        return existed;
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
        JobState after = current.advancedTo(batch.nextOffsets());
        if (toCreate > 0 && !batch.changes().isEmpty()) {
            createTarget();
        }
        List<Change> written = new ArrayList<>();
        transaction(batch.job(), () -> {
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
                producer.send(new ProducerRecord<>(topic, null, r.timestamp(), r.key(), r.value(), headers));
                written.add(c);
                counts[tombstone ? 1 : 0]++;
            }
            // the records are appended: a live writer's record appended before them was consumed from a source
            // record the log holds now; one appended after them is later in the topic, and compaction keeps it
            batch.recheckBeforeCommit();
            sendJob(JobTopic.record(batch.job(), JobStateJson.write(after)));
            if (sameCluster && !batch.nextOffsets().isEmpty()) {
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                batch.nextOffsets().forEach((p, o) -> offsets.put(new TopicPartition(settings.source().topic(), p),
                        new OffsetAndMetadata(o, "kbackfill run " + current.run())));
                producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata("kbackfill-" + batch.job()));
            }
        });
        current = after;
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

    /** The job record of the transaction under way; its offset is known once the transaction committed. */
    private java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata> jobWrite;

    private void sendJob(ProducerRecord<byte[], byte[]> record) {
        jobWrite = producer.send(record);
    }

    private void transaction(String job, Runnable body) {
        try {
            jobWrite = null;
            Transactions.run(producer, job, topic, body, () -> takenOver(job, TAKE_OVER_WAIT));
            if (jobWrite != null) {
                jobTopic.committed(jobWrite.get().offset());
            }
        } catch (ExecutionException e) {
            throw new SinkException("the job record of job " + job + " was committed but its offset is unknown: "
                    + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SinkException("interrupted after committing job " + job, e);
        } catch (Transactions.CommitOutcomeUnknownException e) {
            // never abort a commit whose outcome is unknown; this producer is done
            producer.close(Duration.ZERO);
            producer = null;
            throw e;
        }
    }

    /** Whether another run of {@code job} committed its record since this sink last read or wrote it. */
    boolean takenOver(String job, Duration wait) {
        return jobTopic.writtenSince(job, wait);
    }

    @Override
    public void close() {
        if (index != null) {
            index.close();
            index = null;
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(10));
            producer = null;
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
            admin = null;
        }
    }
}
