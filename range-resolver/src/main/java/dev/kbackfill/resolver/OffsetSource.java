package dev.kbackfill.resolver;

import java.time.Instant;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.IsolationLevel;

/**
 * The narrow seam through which the resolver asks the cluster about a topic. {@link KafkaOffsetSource} answers
 * with Kafka's Admin API and a group-less consumer; tests answer from a model of a log.
 */
public interface OffsetSource {

    /**
     * Describes a topic.
     *
     * @throws RequestException if the topic does not exist
     */
    TopicInfo describe(String topic);

    /** The log start offset of each partition: the oldest offset still retained. */
    Map<Integer, Long> logStartOffsets(String topic, Set<Integer> partitions);

    /**
     * The first offset each partition holds on its leader's local disk (ListOffsets earliest-local, KIP-1005): on a
     * topic with tiered storage, offsets from the log start up to it are read from remote storage. Empty where the
     * source cannot tell (this default; a broker that does not answer it).
     */
    default Map<Integer, Long> localLogStartOffsets(String topic, Set<Integer> partitions) {
        return Map.of();
    }

    /**
     * The end offset of each partition: the high watermark under {@code READ_UNCOMMITTED}, the last stable
     * offset (below any open transaction) under {@code READ_COMMITTED}.
     */
    Map<Integer, Long> endOffsets(String topic, Set<Integer> partitions, IsolationLevel isolationLevel);

    /**
     * For each partition, the first offset whose record timestamp is at or after {@code time}, with that
     * record's timestamp, as Kafka's ListOffsets answers it. A partition with no such record below its end
     * offset (at this isolation level) is absent from the result.
     */
    Map<Integer, TimestampedOffset> offsetsForTime(String topic, Set<Integer> partitions, Instant time,
                                                   IsolationLevel isolationLevel);

    /**
     * For each partition in {@code fromOffsets}, the first record a reader at this isolation level sees at or
     * after that offset and below the partition's entry in {@code endOffsets} whose timestamp is at or after
     * {@code time}. Absent when there is none.
     *
     * <p>This corrects {@link #offsetsForTime}: transaction markers carry the broker's wall-clock time and aborted
     * records their producer's, so a time lookup can answer an offset no reader ever sees. On a topic written
     * transactionally with older event times, the first marker would otherwise cut a time range short.
     */
    Map<Integer, TimestampedOffset> firstVisibleAtOrAfter(String topic, Map<Integer, Long> fromOffsets,
                                                          Map<Integer, Long> endOffsets, Instant time,
                                                          IsolationLevel isolationLevel);

    /**
     * A hint that {@link #firstVisibleAtOrAfter} will soon be asked at this isolation level: a source whose check
     * needs a client of its own may start making it now, while other questions are in flight. A source that
     * ignores the hint (this default) answers the same.
     */
    default void prepareCheck(String topic, IsolationLevel isolationLevel) {
    }

    /**
     * {@link #offsetsForTime} with a time of its own per partition: a source that can ask for them in one request
     * does so ({@link KafkaOffsetSource}); this default asks once per distinct time.
     */
    default Map<Integer, TimestampedOffset> offsetsForTimes(String topic, Map<Integer, Instant> times,
                                                           IsolationLevel isolationLevel) {
        Map<Integer, TimestampedOffset> found = new java.util.HashMap<>();
        Map<Instant, Set<Integer>> byTime = new java.util.HashMap<>();
        times.forEach((p, t) -> byTime.computeIfAbsent(t, x -> new java.util.HashSet<>()).add(p));
        byTime.forEach((t, ps) -> found.putAll(offsetsForTime(topic, ps, t, isolationLevel)));
        return found;
    }

    /**
     * {@link #firstVisibleAtOrAfter} with a time of its own per partition: a source that can check them in one pass
     * does so ({@link KafkaOffsetSource}); this default checks once per distinct time.
     */
    default Map<Integer, TimestampedOffset> firstVisibleAtOrAfter(String topic, Map<Integer, Long> fromOffsets,
                                                                 Map<Integer, Long> endOffsets, Map<Integer, Instant> times,
                                                                 IsolationLevel isolationLevel) {
        Map<Integer, TimestampedOffset> found = new java.util.HashMap<>();
        Map<Instant, Map<Integer, Long>> byTime = new java.util.HashMap<>();
        fromOffsets.forEach((p, o) -> byTime.computeIfAbsent(times.get(p), x -> new java.util.HashMap<>()).put(p, o));
        byTime.forEach((t, from) -> found.putAll(firstVisibleAtOrAfter(topic, from, endOffsets, t, isolationLevel)));
        return found;
    }

    /**
     * The offsets consumer group {@code group} has committed for the partitions of {@code topic} (the next offset it
     * will read), listed without joining the group: nothing about it changes. Partitions without one are absent.
     *
     * @throws RequestException where this source cannot read groups
     */
    default Map<Integer, Long> committedOffsets(String group, String topic) {
        throw new RequestException("this offset source cannot read consumer groups");
    }

    /**
     * The topics consumer group {@code group} has committed offsets on, listed without joining it.
     *
     * @throws RequestException where this source cannot read groups
     */
    default java.util.SortedSet<String> committedTopics(String group) {
        throw new RequestException("this offset source cannot read consumer groups");
    }

    /** An offset and the timestamp of the record at it. */
    record TimestampedOffset(long offset, Instant timestamp) {
    }
}
