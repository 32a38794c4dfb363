package dev.kbackfill.resolver;

import static dev.kbackfill.resolver.Wording.Term.*;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * An {@link OffsetSource} that asks a Kafka cluster: the Admin API for metadata and offsets, and a consumer with
 * no {@code group.id} (assign and seek, never a commit) to check time lookups against what a reader sees.
 */
public final class KafkaOffsetSource implements OffsetSource, AutoCloseable {

    /** How long a check may see no progress before it gives up. */
    private static final Duration STALL_TIMEOUT = Duration.ofSeconds(60);

    /** How long a prepared consumer's warm-up may wait for the topic's metadata (it is only a head start). */
    private static final Duration PREPARE_TIMEOUT = Duration.ofSeconds(5);

    private final Admin admin;
    private final boolean ownsAdmin;
    private final Map<String, Object> clientConfig;
    /** The checking consumers, one per isolation level, each made on a thread of its own (see prepareCheck). */
    private final Map<IsolationLevel, CompletableFuture<KafkaConsumer<Void, Void>>> consumers =
            new java.util.EnumMap<>(IsolationLevel.class);

    private KafkaOffsetSource(Admin admin, boolean ownsAdmin, Map<String, Object> clientConfig) {
        this.admin = admin;
        this.ownsAdmin = ownsAdmin;
        this.clientConfig = Map.copyOf(clientConfig);
    }

    /**
     * Connects with Kafka client settings ({@code bootstrap.servers}, security settings, ...). Settings that
     * would make the checking consumer join or commit to a group are refused.
     */
    public static KafkaOffsetSource create(Map<String, Object> clientConfig) {
        Map<String, Object> adminConfig = adminConfig(clientConfig);
        return new KafkaOffsetSource(ClientConfigs.creating(BOOTSTRAP_SERVERS.toString(), clientConfig,
                () -> Admin.create(adminConfig)), true, clientConfig);
    }

    /** The planning Admin client's settings, from the client settings {@code clientConfig}. */
    static Map<String, Object> adminConfig(Map<String, Object> clientConfig) {
        Map<String, Object> adminConfig = ClientConfigs.only(clientConfig, AdminClientConfig.configNames());
        // a short-lived planning client, like the checking consumer: no JMX beans unless asked for (registering its
        // metrics' beans was half of its making, about 60 ms of a cron run's start)
        adminConfig.putIfAbsent(AdminClientConfig.METRIC_REPORTER_CLASSES_CONFIG, "");
        // nor client telemetry (KIP-714) unless asked for: its reporter renames every metric by regular expression,
        // and asks the broker for a subscription a plan has no use for
        adminConfig.putIfAbsent(AdminClientConfig.ENABLE_METRICS_PUSH_CONFIG, false);
        return adminConfig;
    }

    /** Uses {@code admin} (without closing it) and {@code clientConfig} for the checking consumer. */
    public static KafkaOffsetSource using(Admin admin, Map<String, Object> clientConfig) {
        return new KafkaOffsetSource(admin, false, clientConfig);
    }

    @Override
    public void close() {
        List<CompletableFuture<KafkaConsumer<Void, Void>>> made;
        synchronized (consumers) {
            made = List.copyOf(consumers.values());
            consumers.clear();
        }
        for (CompletableFuture<KafkaConsumer<Void, Void>> f : made) {
            // a consumer still warming up is closed by its maker once made: a failed command does not wait for a
            // cluster that does not answer (a consumer never made has nothing to close)
            f.thenAccept(c -> c.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5))));
        }
        if (ownsAdmin) {
            // a question the cluster never answered is given up, not waited for: a failed command exits at once
            admin.close(Duration.ofSeconds(1));
        }
    }

    /** The cluster's topic within two edits of {@code topic}, if one is (and the cluster lists its topics). */
    private Optional<String> nearestTopic(String topic) {
        try {
            // bounded by the client's default.api.timeout.ms, as every other question of this source
            return EditDistance.nearest(topic, new TreeSet<>(admin.listTopics().names().get()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (ExecutionException | RuntimeException e) {
            return Optional.empty(); // a suggestion only: the topic's absence is what is reported
        }
    }

    @Override
    public TopicInfo describe(String topic) {
        // three questions in flight at once: one round trip, not three (the configs' answer for a topic that does
        // not exist is never looked at)
        KafkaFuture<String> cluster = admin.describeCluster().clusterId();
        KafkaFuture<TopicDescription> described = admin.describeTopics(List.of(topic)).topicNameValues().get(topic);
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        KafkaFuture<Config> configured = admin.describeConfigs(List.of(resource)).values().get(resource);
        String clusterId = get(cluster, "describe the cluster");
        TopicDescription description;
        try {
            description = described.get(answerWithinMs(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                throw new RequestException("topic '" + topic + "' does not exist on cluster " + clusterId
                        + nearestTopic(topic).map(t -> "; did you mean '" + t + "'?").orElse(""));
            }
            throw failure("describe topic " + topic, e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw failure("describe topic " + topic, new org.apache.kafka.common.errors.TimeoutException(
                    "no answer within " + answerWithinMs() + " ms", e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("describe topic " + topic, e);
        }
        Config config = get(configured, "describe the configuration of topic " + topic);
        TreeSet<Integer> partitions = description.partitions().stream()
                .map(p -> p.partition()).collect(Collectors.toCollection(TreeSet::new));
        String timestampType = value(config, TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG).orElse("CreateTime");
        boolean compacted = value(config, TopicConfig.CLEANUP_POLICY_CONFIG)
                .map(v -> List.of(v.split(",")).stream().anyMatch(s -> s.strip().equals(TopicConfig.CLEANUP_POLICY_COMPACT)))
                .orElse(false);
        Optional<Duration> deleteRetention = value(config, TopicConfig.DELETE_RETENTION_MS_CONFIG)
                .map(v -> Duration.ofMillis(Long.parseLong(v)));
        boolean remote = value(config, TopicConfig.REMOTE_LOG_STORAGE_ENABLE_CONFIG).map(Boolean::parseBoolean)
                .orElse(false);
        return new TopicInfo(clusterId, topic, description.topicId().toString(), partitions,
                TopicInfo.TimestampType.fromConfig(timestampType), compacted, deleteRetention, remote);
    }

    @Override
    public Map<Integer, Long> logStartOffsets(String topic, Set<Integer> partitions) {
        return listOffsets(topic, partitions, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED, "log start")
                .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    /** Earliest-local offsets (KIP-1005); none from a broker that does not answer them (before Kafka 3.9). */
    @Override
    public Map<Integer, Long> localLogStartOffsets(String topic, Set<Integer> partitions) {
        try {
            return listOffsets(topic, partitions, OffsetSpec.earliestLocal(), IsolationLevel.READ_UNCOMMITTED,
                    "earliest local").entrySet().stream().filter(e -> e.getValue().offset() >= 0)
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
        } catch (ResolutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnsupportedVersionException) {
                return Map.of();
            }
            throw e;
        }
    }

    @Override
    public Map<Integer, Long> committedOffsets(String group, String topic) {
        Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> all = get(admin
                .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata(), "list the offsets of group " + group);
        Map<Integer, Long> offsets = new java.util.TreeMap<>();
        all.forEach((tp, om) -> {
            if (tp.topic().equals(topic) && om != null && om.offset() >= 0) {
                offsets.put(tp.partition(), om.offset());
            }
        });
        return offsets;
    }

    @Override
    public java.util.SortedSet<String> committedTopics(String group) {
        java.util.SortedSet<String> topics = new java.util.TreeSet<>();
        get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata(), "list the offsets of group " + group)
                .forEach((tp, om) -> {
                    if (om != null && om.offset() >= 0) {
                        topics.add(tp.topic());
                    }
                });
        return topics;
    }

    @Override
    public Map<Integer, Long> endOffsets(String topic, Set<Integer> partitions, IsolationLevel isolationLevel) {
        return listOffsets(topic, partitions, OffsetSpec.latest(), isolationLevel, "end")
                .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    @Override
    public Map<Integer, TimestampedOffset> offsetsForTime(String topic, Set<Integer> partitions, Instant time,
                                                          IsolationLevel isolationLevel) {
        Map<Integer, TimestampedOffset> result = new HashMap<>();
        listOffsets(topic, partitions, OffsetSpec.forTimestamp(time.toEpochMilli()), isolationLevel, "time")
                .forEach((p, info) -> {
                    // ListOffsets answers offset -1 when no record at or after the time lies below the end.
                    if (info.offset() >= 0) {
                        result.put(p, new TimestampedOffset(info.offset(), Instant.ofEpochMilli(info.timestamp())));
                    }
                });
        return result;
    }

    @Override
    public Map<Integer, TimestampedOffset> offsetsForTimes(String topic, Map<Integer, Instant> times,
                                                           IsolationLevel isolationLevel) {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        times.forEach((p, t) -> request.put(new TopicPartition(topic, p), OffsetSpec.forTimestamp(t.toEpochMilli())));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> answer = get(admin.listOffsets(request,
                new ListOffsetsOptions(isolationLevel)).all(), "list the time offsets of topic " + topic);
        Map<Integer, TimestampedOffset> result = new HashMap<>();
        answer.forEach((tp, info) -> {
            if (info.offset() >= 0) {
                result.put(tp.partition(), new TimestampedOffset(info.offset(), Instant.ofEpochMilli(info.timestamp())));
            }
        });
        return result;
    }

    @Override
    public Map<Integer, TimestampedOffset> firstVisibleAtOrAfter(String topic, Map<Integer, Long> fromOffsets,
                                                                 Map<Integer, Long> endOffsets, Instant time,
                                                                 IsolationLevel isolationLevel) {
        Map<Integer, Instant> times = new HashMap<>();
        fromOffsets.keySet().forEach(p -> times.put(p, time));
        return firstVisibleAtOrAfter(topic, fromOffsets, endOffsets, times, isolationLevel);
    }

    @Override
    public Map<Integer, TimestampedOffset> firstVisibleAtOrAfter(String topic, Map<Integer, Long> fromOffsets,
                                                                 Map<Integer, Long> endOffsets, Map<Integer, Instant> times,
                                                                 IsolationLevel isolationLevel) {
        Instant time = times.values().stream().min(Instant::compareTo).orElse(Instant.EPOCH); // for messages
        Map<Integer, TimestampedOffset> found = new HashMap<>();
        Map<TopicPartition, Long> pending = new HashMap<>();
        fromOffsets.forEach((p, from) -> {
            if (from < endOffsets.get(p)) {
                pending.put(new TopicPartition(topic, p), from);
            }
        });
        if (pending.isEmpty()) {
            return found;
        }
        try {
            KafkaConsumer<Void, Void> consumer = consumer(isolationLevel);
            consumer.assign(pending.keySet());
            consumer.resume(consumer.assignment()); // a partition paused by an earlier check stays paused otherwise
            pending.forEach(consumer::seek);
            long lastProgress = System.nanoTime();
            while (!pending.isEmpty()) {
                ConsumerRecords<Void, Void> records = consumer.poll(Duration.ofMillis(200));
                for (TopicPartition tp : records.partitions()) {
                    if (!pending.containsKey(tp)) {
                        continue;
                    }
                    long end = endOffsets.get(tp.partition());
                    long after = times.get(tp.partition()).toEpochMilli();
                    for (ConsumerRecord<Void, Void> r : records.records(tp)) { // up to the first that answers
                        if (r.offset() < end && r.timestamp() >= after) {
                            found.put(tp.partition(), new TimestampedOffset(r.offset(), Instant.ofEpochMilli(r.timestamp())));
                            pending.remove(tp);
                            break;
                        }
                    }
                }
                // Done with a partition once its position reaches the end: markers mean no record need sit at end - 1.
                for (TopicPartition tp : List.copyOf(pending.keySet())) {
                    long position = consumer.position(tp);
                    if (position >= endOffsets.get(tp.partition())) {
                        pending.remove(tp);
                    } else if (position > pending.get(tp)) {
                        pending.put(tp, position);
                        lastProgress = System.nanoTime();
                    }
                }
                consumer.pause(consumer.assignment().stream().filter(tp -> !pending.containsKey(tp)).toList());
                if (!records.isEmpty()) {
                    lastProgress = System.nanoTime();
                }
                if (System.nanoTime() - lastProgress > STALL_TIMEOUT.toNanos()) {
                    throw new ResolutionException("could not check the time lookup of topic " + topic + " at "
                            + time + ": no progress for " + STALL_TIMEOUT.toSeconds() + " s at " + pending, null);
                }
            }
        } catch (OffsetOutOfRangeException e) {
            throw new ResolutionException("could not check the time lookup of topic " + topic + " at " + time
                    + ": offsets " + e.offsetOutOfRangePartitions() + " were deleted while planning", e);
        } catch (KafkaException e) {
            throw failure("check the time lookup of topic " + topic + " at " + time, e);
        }
        return found;
    }

    /**
     * Starts making the checking consumer for this isolation level on a thread of its own, and has it ask for the
     * topic's metadata, so that the classes of a consumer, its connection and its first request are behind it when
     * the check comes. Over 1,000 partitions a cold consumer's first check took 0.4-0.7 s of a 1.2-1.4 s plan; made
     * beside the Admin requests, much of that overlaps with waiting for their answers. A failure to make it is
     * the check's to report, as if it had been made then.
     */
    @Override
    public void prepareCheck(String topic, IsolationLevel isolationLevel) {
        synchronized (consumers) {
            consumers.computeIfAbsent(isolationLevel, level -> {
                CompletableFuture<KafkaConsumer<Void, Void>> made = new CompletableFuture<>();
                Thread maker = new Thread(() -> {
                    KafkaConsumer<Void, Void> c;
                    try {
                        c = newConsumer(level);
                    } catch (RuntimeException | Error e) {
                        made.completeExceptionally(e);
                        return;
                    }
                    try {
                        c.partitionsFor(topic, Duration.ofMillis(Math.min(PREPARE_TIMEOUT.toMillis(),
                                answerWithinMs())));
                    } catch (RuntimeException e) {
                        // a warm-up only: an unknown topic, a missing permission or a slow cluster is the Admin
                        // requests' or the check's to report
                    }
                    made.complete(c);
                }, "kbackfill-plan-check");
                maker.setDaemon(true);
                maker.start();
                return made;
            });
        }
    }

    /** One checking consumer per isolation level, made on first use (or prepared) and kept until {@link #close()}. */
    private KafkaConsumer<Void, Void> consumer(IsolationLevel isolationLevel) {
        CompletableFuture<KafkaConsumer<Void, Void>> made;
        synchronized (consumers) {
            made = consumers.computeIfAbsent(isolationLevel, level -> {
                try {
                    return CompletableFuture.completedFuture(newConsumer(level));
                } catch (RuntimeException e) {
                    return CompletableFuture.failedFuture(e);
                }
            });
        }
        try {
            return made.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    private KafkaConsumer<Void, Void> newConsumer(IsolationLevel isolationLevel) {
        return new KafkaConsumer<>(checkingConsumerConfig(isolationLevel), new Skip(), new Skip());
    }

    /** Reads nothing of a key or a value: a check needs a record's offset and timestamp, not copies of its bytes. */
    private static final class Skip implements Deserializer<Void> {
        @Override
        public Void deserialize(String topic, byte[] data) {
            return null;
        }

        @Override
        public Void deserialize(String topic, Headers headers, ByteBuffer data) {
            return null;
        }
    }

    /** The checking consumer's settings for this isolation level. */
    Map<String, Object> checkingConsumerConfig(IsolationLevel isolationLevel) {
        if (clientConfig.containsKey(ConsumerConfig.GROUP_ID_CONFIG)) {
            throw new RequestException("group.id '" + clientConfig.get(ConsumerConfig.GROUP_ID_CONFIG)
                    + "' is not allowed: kbackfill never joins or commits to a consumer group; remove it");
        }
        Map<String, Object> config = ClientConfigs.only(clientConfig, ConsumerConfig.configNames());
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolationLevel.toString());
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "kbackfill-plan-check");
        // asking about a topic (prepareCheck) must never create it on a broker that creates topics on first use
        config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        // a short-lived internal client: no JMX beans for its 1,000 partitions' fetch metrics unless asked for, nor
        // client telemetry
        config.putIfAbsent(ConsumerConfig.METRIC_REPORTER_CLASSES_CONFIG, "");
        config.putIfAbsent(ConsumerConfig.ENABLE_METRICS_PUSH_CONFIG, false);
        // A check wants the first visible record of each partition, not its data: polls that return every
        // partition's buffered first batch at once rather than 500 records at a time (over 1,000 partitions the
        // check took about 600 ms with the default, 200 ms with this; bench/run.sh plan). Smaller fetches per
        // partition would help more here but starve partitions whose first batch is larger (the broker returns an
        // oversized batch only for the first partition of a response): one partition per round trip.
        config.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 100_000);
        // a check asks for what is there, not for records to arrive: a fetch that finds little (a range ending in
        // markers, a partition read to its end) answers at once instead of waiting the default half second, which a
        // log-time lookup (LogTimes) would pay once per probe
        config.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
        return config;
    }

    private Map<Integer, ListOffsetsResult.ListOffsetsResultInfo> listOffsets(
            String topic, Set<Integer> partitions, OffsetSpec spec, IsolationLevel isolationLevel, String what) {
        Map<TopicPartition, OffsetSpec> request = partitions.stream()
                .collect(Collectors.toMap(p -> new TopicPartition(topic, p), p -> spec));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> answer =
                get(admin.listOffsets(request, new ListOffsetsOptions(isolationLevel)).all(),
                        "list the " + what + " offsets of topic " + topic);
        return answer.entrySet().stream()
                .collect(Collectors.toMap(e -> e.getKey().partition(), Map.Entry::getValue));
    }

    /**
     * The bytes each partition's log takes on its leader (DescribeLogDirs), for estimates: empty for a partition
     * whose size the cluster does not tell (no leader, or a user not allowed to describe the cluster).
     */
    public Map<Integer, Long> logSizes(String topic, java.util.Set<Integer> partitions) {
        Map<Integer, Long> sizes = new java.util.HashMap<>();
        try {
            var description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            Map<Integer, Integer> leaders = new java.util.HashMap<>();
            description.partitions().forEach(p -> {
                if (partitions.contains(p.partition()) && p.leader() != null) {
                    leaders.put(p.partition(), p.leader().id());
                }
            });
            var dirs = admin.describeLogDirs(new java.util.HashSet<>(leaders.values())).allDescriptions().get();
            dirs.forEach((broker, byDir) -> byDir.values().forEach(dir -> dir.replicaInfos().forEach((tp, info) -> {
                if (tp.topic().equals(topic) && Integer.valueOf(broker).equals(leaders.get(tp.partition()))) {
                    sizes.merge(tp.partition(), info.size(), Long::sum);
                }
            })));
        } catch (ExecutionException e) {
            return Map.of(); // an estimate is a courtesy: without sizes, records only
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of();
        }
        return sizes;
    }

    private static Optional<String> value(Config config, String name) {
        return Optional.ofNullable(config.get(name)).map(ConfigEntry::value);
    }

    /**
     * How long an answer of the admin client is waited for: its own {@code default.api.timeout.ms} (what
     * {@code --connect-timeout} sets) and half a second. The client does not always keep to it: with a cluster
     * that does not answer at all, a call waits on the connection's setup (seen at 10 to 30 s for a 5 s timeout).
     */
    private long answerWithinMs() {
        Object timeout = clientConfig.get("default.api.timeout.ms");
        return (timeout == null ? 60_000 : Long.parseLong(timeout.toString())) + 500;
    }

    private <T> T get(KafkaFuture<T> future, String action) {
        try {
            return future.get(answerWithinMs(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw failure(action, new org.apache.kafka.common.errors.TimeoutException("no answer within "
                    + answerWithinMs() + " ms", e));
        } catch (ExecutionException e) {
            throw failure(action, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(action, e);
        }
    }

    private ResolutionException failure(String action, Throwable cause) {
        return new ResolutionException("could not " + action + ": " + ClientConfigs.why(clientConfig, cause), cause);
    }
}
