package dev.kbackfill.resolver;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;

/**
 * What the resolver needs to know of a topic.
 *
 * @param clusterId         the cluster's id
 * @param topic             the topic name
 * @param topicId           the topic's id: a deleted and recreated topic has a new one
 * @param partitions        the partition numbers
 * @param timestampType     whose clock record timestamps come from
 * @param compacted         whether {@code cleanup.policy} includes {@code compact}
 * @param deleteRetention   {@code delete.retention.ms}: how long tombstones survive compaction
 * @param remoteStorage     whether {@code remote.storage.enable} is on: older segments may be in tiered storage
 */
public record TopicInfo(String clusterId, String topic, String topicId, SortedSet<Integer> partitions,
                        TimestampType timestampType, boolean compacted, Optional<Duration> deleteRetention,
                        boolean remoteStorage) {

    /** A topic without tiered storage. */
    public TopicInfo(String clusterId, String topic, String topicId, SortedSet<Integer> partitions,
                     TimestampType timestampType, boolean compacted, Optional<Duration> deleteRetention) {
        this(clusterId, topic, topicId, partitions, timestampType, compacted, deleteRetention, false);
    }

    public TopicInfo {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(topicId, "topicId");
        Objects.requireNonNull(timestampType, "timestampType");
        Objects.requireNonNull(deleteRetention, "deleteRetention");
        partitions = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(partitions));
    }

    /** {@code message.timestamp.type}. */
    public enum TimestampType {
        /** Set by the producer: event time, possibly out of order. */
        CREATE_TIME("CreateTime"),
        /** Set by the broker on append: in offset order, but the time of writing, not of the event. */
        LOG_APPEND_TIME("LogAppendTime");

        private final String configValue;

        TimestampType(String configValue) {
            this.configValue = configValue;
        }

        /** The value as Kafka's topic configuration spells it. */
        public String configValue() {
            return configValue;
        }

        public static TimestampType fromConfig(String value) {
            for (TimestampType t : values()) {
                if (t.configValue.equalsIgnoreCase(value)) {
                    return t;
                }
            }
            throw new IllegalArgumentException("unknown message.timestamp.type: " + value);
        }
    }
}
