package dev.kbackfill.sink.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStateJson;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.SinkException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.resolver.ClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A cluster's store of job state, the {@link JobStore} of a topic destination: the compacted topic {@value #NAME},
 * one record per job keyed by its name, whose latest value is the job's state (a tombstone once it is reset).
 *
 * <p>The job's lock is its transactional producer ({@code transactional.id} {@code kbackfill-<job>}): taking it
 * fences any other run of the job and aborts what that run left open. The writer sends a batch's records in a
 * transaction of this producer ({@link #transaction}), and {@link #advance} adds the job's record and, on the source's
 * own cluster, the source offsets of the backfill's own group {@code kbackfill-<job>} (never a live group) to it: the
 * progress commits with the records or not at all. Reads of the states never fall behind what this store committed.
 */
final class JobTopic implements JobStore {

    static final String NAME = "kbackfill-jobs";

    /** How long a transaction that failed for no stated reason waits to see whether another run took the job over. */
    private static final Duration TAKE_OVER_WAIT = Duration.ofSeconds(10);

    private final SinkSettings settings;
    /** The destination topic. */
    private final String topic;
    private final Map<String, Object> config;
    private Admin admin;
    /** The job's transactional producer while its lock is held. */
    private KafkaProducer<byte[], byte[]> producer;
    /** Whether the sink's cluster is the source's: the source offsets are then committed to the job's own group. */
    private boolean sameCluster;
    /** The job's state as last loaded, begun or committed. */
    private JobState current;
    /** The state a batch's transaction under way moves the job to. */
    private JobState advancing;
    /** The job record of the transaction under way; its offset is known once the transaction committed. */
    private java.util.concurrent.Future<RecordMetadata> jobWrite;
    /** The offset after this store's last committed job record: what its own reads must see. */
    private long writtenUpTo;
    /** The end of the topic when this store last read the job states. */
    private long readUpTo;

    /**
     * @param topic  the destination topic
     * @param config the sink's cluster's client settings
     */
    JobTopic(SinkSettings settings, String topic, Map<String, Object> config) {
        this.settings = settings;
        this.topic = topic;
        this.config = config;
    }

    /** Its jobs are looked for where its rows go. */
    @Override
    public String store() {
        return "kafka:" + topic + " at " + config.get("bootstrap.servers");
    }

    @Override
    public String destination() {
        return "topic " + topic;
    }

    /** The admin client of the sink's cluster, made now if there is none (nothing is created). */
    Admin admin() {
        if (admin == null) {
            admin = ClientConfigs.creating("--sink-bootstrap-server", config,
                    () -> Admin.create(Topics.adminOnly(config)));
        }
        return admin;
    }

    /** Reaches the cluster and creates {@value #NAME} where it does not exist. */
    @Override
    public void openForJobs() {
        Admin a = admin();
        try {
            if (Topics.describe(a, NAME) == null) {
                try {
                    a.createTopics(List.of(new NewTopic(NAME, Optional.of(1), Optional.empty())
                            .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))))
                            .all().get(Topics.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                        throw e;
                    }
                }
                Topics.await(a, NAME);
            }
            String targetCluster = a.describeCluster().clusterId().get(Topics.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            sameCluster = settings.clientConfig().isEmpty() || sourceClusterId().equals(targetCluster);
        } catch (ExecutionException e) {
            throw new SinkException("cannot reach the sink's cluster: " + ClientConfigs.why(config, e.getCause()),
                    e.getCause());
        } catch (TimeoutException | InterruptedException e) {
            throw new SinkException("cannot reach " + config.get("bootstrap.servers") + ": " + e, e);
        }
    }

    private String sourceClusterId() throws ExecutionException, InterruptedException, TimeoutException {
        if (settings.source().clientConfig().isEmpty()) {
            return "";
        }
        try (Admin source = Admin.create(Topics.adminOnly(settings.source().clientConfig()))) {
            return source.describeCluster().clusterId().get(Topics.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
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
        String latest = latest(Set.of(job), "read the state of job " + job).get(job);
        current = latest != null ? JobStateJson.read(latest) : null;
        return Optional.ofNullable(current);
    }

    @Override
    public Map<String, JobState> loadAll(java.util.Collection<String> jobs) {
        Map<String, JobState> states = new HashMap<>();
        latest(new java.util.HashSet<>(jobs), "read the state of " + jobs.size() + " jobs")
                .forEach((name, json) -> states.put(name, JobStateJson.read(json)));
        return states;
    }

    @Override
    public boolean sharesJobStore() {
        return true; // one job topic per cluster
    }

    @Override
    public List<String> jobs() {
        return latest(null, "list the jobs").keySet().stream().sorted().toList();
    }

    @Override
    public void begin(JobState state) {
        transaction(state.job(), () -> sendJob(record(state.job(), JobStateJson.write(state))));
        current = state;
    }

    @Override
    public boolean reset(String job) {
        boolean existed = load(job).isPresent();
        if (producer == null) {
            throw new IllegalStateException("reset needs the job's lock");
        }
        transaction(job, () -> sendJob(record(job, null)));
        if (sameCluster) {
            try {
                admin().deleteConsumerGroups(List.of("kbackfill-" + job)).all()
                        .get(Topics.TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException | InterruptedException e) {
                // no offsets committed yet: nothing to delete
            }
        }
        current = null;
        return existed;
    }

    /** The job's transactional producer, while its lock is held: the writer sends a batch's records with it. */
    KafkaProducer<byte[], byte[]> producer() {
        return producer;
    }

    /** The job's state as last loaded, begun or committed. */
    JobState current() {
        return current;
    }

    /**
     * Runs {@code body} in a transaction of the job's producer and commits it; a body that calls {@link #advance}
     * moves the job's state once the commit returned.
     */
    void transaction(String job, Runnable body) {
        try {
            jobWrite = null;
            advancing = null;
            Transactions.run(producer, job, topic, body, () -> takenOver(job, TAKE_OVER_WAIT));
            if (jobWrite != null) {
                committed(jobWrite.get().offset());
            }
            if (advancing != null) {
                current = advancing;
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
        } finally {
            advancing = null;
        }
    }

    /**
     * Moves the job's progress to {@code nextOffsets}, in the transaction under way ({@link #transaction}): the job's
     * record and, on the source's cluster, the source offsets committed to the job's own group.
     */
    void advance(String job, Map<Integer, Long> nextOffsets) {
        JobState after = current.advancedTo(nextOffsets);
        sendJob(record(job, JobStateJson.write(after)));
        if (sameCluster && !nextOffsets.isEmpty()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            nextOffsets.forEach((p, o) -> offsets.put(new TopicPartition(settings.source().topic(), p),
                    new OffsetAndMetadata(o, "kbackfill run " + current.run())));
            producer.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata("kbackfill-" + job));
        }
        advancing = after;
    }

    private void sendJob(ProducerRecord<byte[], byte[]> record) {
        jobWrite = producer.send(record);
    }

    /** Whether another run of {@code job} committed its record since this store last read or wrote it. */
    boolean takenOver(String job, Duration wait) {
        return writtenSince(job, wait);
    }

    /** Closes the job's producer (where its lock is still held) and the admin client. */
    @Override
    public void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(10));
            producer = null;
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(10));
            admin = null;
        }
    }

    /** The record that stores {@code state} (JSON) as the job's, or forgets the job ({@code null}). */
    static ProducerRecord<byte[], byte[]> record(String job, String state) {
        return new ProducerRecord<>(NAME, 0, job.getBytes(StandardCharsets.UTF_8),
                state == null ? null : state.getBytes(StandardCharsets.UTF_8));
    }

    /** A job record of this store's was committed at {@code offset}. */
    private void committed(long offset) {
        writtenUpTo = Math.max(writtenUpTo, offset + 1);
    }

    /**
     * The latest state of each job ({@code only} those, or every job when null), read to the topic's end; a job whose
     * latest record is a tombstone (reset) has none.
     *
     * @param action what is being done, for the message of a failure ("read the state of job J")
     */
    Map<String, String> latest(Set<String> only, String action) {
        Map<String, String> latest = new HashMap<>();
        try {
            List<BoundedReader.Range> ranges = Topics.ranges(admin(), List.of(0), NAME);
            // read your own writes: a commit has returned before the last stable offset moved past it (the
            // markers are written after), so wait for it to cover what this sink committed
            long deadline = System.nanoTime() + Topics.TIMEOUT.toNanos();
            while (ranges.get(0).end() < writtenUpTo && System.nanoTime() < deadline) {
                Thread.sleep(10);
                ranges = Topics.ranges(admin(), List.of(0), NAME);
            }
            if (ranges.get(0).end() < writtenUpTo) {
                throw new SinkException("cannot " + action + " from " + NAME + ": its last stable offset stays at "
                        + ranges.get(0).end() + ", below the job record this run committed at " + (writtenUpTo - 1));
            }
            readUpTo = Math.max(readUpTo, ranges.get(0).end());
            read(ranges, (name, value) -> {
                if (only == null || only.contains(name)) {
                    latest.put(name, value);
                }
            });
        } catch (ExecutionException e) {
            throw new SinkException("cannot " + action + " from " + NAME + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException | InterruptedException e) {
            throw new SinkException("cannot " + action + " from " + NAME + ": " + e, e);
        }
        latest.values().removeIf(java.util.Objects::isNull);
        return latest;
    }

    /**
     * Whether a record of {@code job} was committed after this sink last read the states and after its own last
     * commit: only a run of the job writes its record, so another run has taken the job over. Asked after a
     * transaction failed for no stated reason; looks again until {@code wait} has passed (the run that fenced this
     * one commits its first record shortly after), so a plain failure is reported that much later.
     */
    boolean writtenSince(String job, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        try {
            while (true) {
                long from = Math.max(readUpTo, writtenUpTo);
                BoundedReader.Range whole = Topics.ranges(admin(), List.of(0), NAME).get(0);
                if (whole.end() > from) {
                    boolean[] found = {false};
                    read(List.of(new BoundedReader.Range(0, Math.max(from, whole.start()), whole.end())),
                            (name, value) -> found[0] |= name.equals(job));
                    if (found[0]) {
                        return true;
                    }
                }
                if (System.nanoTime() >= deadline) {
                    return false;
                }
                Thread.sleep(200);
            }
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            return false; // the question cannot be answered: the transaction's own failure is reported
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Each committed record of {@code ranges}, as the job's name and its state (null for a reset). */
    private void read(List<BoundedReader.Range> ranges, java.util.function.BiConsumer<String, String> each)
            throws InterruptedException {
        try (BoundedReader reader = new BoundedReader(NAME, config, IsolationLevel.READ_COMMITTED, ranges, false,
                Duration.ofMinutes(1))) {
            reader.read((records, positions, lost) -> {
                for (SourceRecord r : records) {
                    if (r.key() != null) {
                        each.accept(new String(r.key(), StandardCharsets.UTF_8),
                                r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    }
                }
            });
        }
    }
}
