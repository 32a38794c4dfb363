package dev.kbackfill.resolver;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** An {@link OffsetSource} backed by Kafka's {@link Admin} client (ListOffsets, DescribeTopics, DescribeConfigs). */
public final class AdminOffsetSource implements OffsetSource {

    private final Admin admin;

    /** Uses {@code admin} without closing it. */
    public AdminOffsetSource(Admin admin) {
        this.admin = admin;
    }

    @Override
    public TopicInfo describe(String topic) {
        String clusterId = get(admin.describeCluster().clusterId(), "describe the cluster");
        TopicDescription description;
        try {
            description = admin.describeTopics(List.of(topic)).topicNameValues().get(topic).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                throw new RequestException("topic '" + topic + "' does not exist on cluster " + clusterId);
            }
            throw failure("describe topic " + topic, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure("describe topic " + topic, e);
        }
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = get(admin.describeConfigs(List.of(resource)).values().get(resource),
                "describe the configuration of topic " + topic);
        TreeSet<Integer> partitions = description.partitions().stream()
                .map(p -> p.partition()).collect(Collectors.toCollection(TreeSet::new));
        String timestampType = value(config, TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG).orElse("CreateTime");
        boolean compacted = value(config, TopicConfig.CLEANUP_POLICY_CONFIG)
                .map(v -> List.of(v.split(",")).stream().anyMatch(s -> s.strip().equals(TopicConfig.CLEANUP_POLICY_COMPACT)))
                .orElse(false);
        Optional<Duration> deleteRetention = value(config, TopicConfig.DELETE_RETENTION_MS_CONFIG)
                .map(v -> Duration.ofMillis(Long.parseLong(v)));
        return new TopicInfo(clusterId, topic, description.topicId().toString(), partitions,
                TopicInfo.TimestampType.fromConfig(timestampType), compacted, deleteRetention);
    }

    @Override
    public Map<Integer, Long> logStartOffsets(String topic, Set<Integer> partitions) {
        return listOffsets(topic, partitions, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED, "log start")
                .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
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

    private static Optional<String> value(Config config, String name) {
        return Optional.ofNullable(config.get(name)).map(ConfigEntry::value);
    }

    private static <T> T get(KafkaFuture<T> future, String action) {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw failure(action, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(action, e);
        }
    }

    private static ResolutionException failure(String action, Throwable cause) {
        String why = cause instanceof TimeoutException
                ? "timed out (is the cluster reachable at the bootstrap servers?)"
                : cause.getClass().getSimpleName() + ": " + cause.getMessage();
        return new ResolutionException("could not " + action + ": " + why, cause);
    }
}
