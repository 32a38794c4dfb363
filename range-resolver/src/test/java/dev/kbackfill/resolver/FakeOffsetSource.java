package dev.kbackfill.resolver;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.IsolationLevel;

/**
 * A model of one topic's logs answering the way Kafka's ListOffsets does: a time lookup gives the first offset at
 * or after the log start whose timestamp is at or after the time, provided it lies below the end offset of the
 * isolation level.
 */
final class FakeOffsetSource implements OffsetSource {

    /**
     * One partition: timestamps by offset, the offsets no reader sees (transaction markers; aborted records,
     * under read_committed), the log start, and the last stable offset.
     */
    static final class Log {
        final TreeMap<Long, Instant> records = new TreeMap<>();
        final Set<Long> markers = new TreeSet<>();
        final Set<Long> aborted = new TreeSet<>();
        long logStart;
        /** The first offset on local disk, where the topic has tiered storage (null: all of it local). */
        Long localStart;
        long highWatermark;
        Long lastStable; // null: no open transaction

        Log append(Instant... timestamps) {
            for (Instant t : timestamps) {
                records.put(highWatermark++, t);
            }
            return this;
        }

        /** A transaction marker, stamped with the broker's wall clock. */
        Log marker(Instant wallClock) {
            markers.add(highWatermark);
            return append(wallClock);
        }

        Log abortedRecords(Instant... timestamps) {
            for (Instant t : timestamps) {
                aborted.add(highWatermark);
                append(t);
            }
            return this;
        }

        boolean visible(long offset, IsolationLevel level) {
            return records.containsKey(offset) && !markers.contains(offset)
                    && !(level == IsolationLevel.READ_COMMITTED && aborted.contains(offset));
        }

        Log deleteBelow(long offset) {
            logStart = offset;
            records.headMap(offset).clear();
            return this;
        }

        Log openTransactionAt(long offset) {
            lastStable = offset;
            return this;
        }

        long end(IsolationLevel level) {
            return level == IsolationLevel.READ_COMMITTED && lastStable != null ? lastStable : highWatermark;
        }
    }

    final String topic;
    final Map<Integer, Log> logs = new HashMap<>();
    /** Consumer groups' committed offsets of this topic, by group. */
    final Map<String, Map<Integer, Long>> groups = new HashMap<>();

    @Override
    public Map<Integer, Long> committedOffsets(String group, String topic) {
        return topic.equals(this.topic) ? groups.getOrDefault(group, Map.of()) : Map.of();
    }
    TopicInfo.TimestampType timestampType = TopicInfo.TimestampType.CREATE_TIME;
    boolean compacted;
    Optional<Duration> deleteRetention = Optional.of(Duration.ofDays(1));
    String topicId = "topic-id-1";
    final List<String> calls = new ArrayList<>();
    /** The partitions each scan (a reader's check) read from, in call order. */
    final List<Set<Integer>> scanned = new ArrayList<>();

    FakeOffsetSource(String topic, int partitions) {
        this.topic = topic;
        for (int p = 0; p < partitions; p++) {
            logs.put(p, new Log());
        }
    }

    Log log(int partition) {
        return logs.get(partition);
    }

    @Override
    public TopicInfo describe(String name) {
        calls.add("describe");
        if (!name.equals(topic)) {
            throw new RequestException("topic '" + name + "' does not exist on cluster fake-cluster");
        }
        return new TopicInfo("fake-cluster", topic, topicId, new TreeSet<>(logs.keySet()), timestampType, compacted,
                deleteRetention, remoteStorage);
    }

    /** Whether the topic has tiered storage ({@code remote.storage.enable}). */
    boolean remoteStorage;

    @Override
    public Map<Integer, Long> localLogStartOffsets(String name, Set<Integer> partitions) {
        calls.add("localStart");
        Map<Integer, Long> r = new HashMap<>();
        partitions.forEach(p -> r.put(p, logs.get(p).localStart == null ? logs.get(p).logStart : logs.get(p).localStart));
        return r;
    }

    @Override
    public Map<Integer, Long> logStartOffsets(String name, Set<Integer> partitions) {
        calls.add("logStart");
        Map<Integer, Long> r = new HashMap<>();
        partitions.forEach(p -> r.put(p, logs.get(p).logStart));
        return r;
    }

    @Override
    public Map<Integer, Long> endOffsets(String name, Set<Integer> partitions, IsolationLevel level) {
        calls.add("end:" + level);
        Map<Integer, Long> r = new HashMap<>();
        partitions.forEach(p -> r.put(p, logs.get(p).end(level)));
        return r;
    }

    @Override
    public Map<Integer, TimestampedOffset> offsetsForTime(String name, Set<Integer> partitions, Instant time,
                                                          IsolationLevel level) {
        calls.add("time");
        Map<Integer, TimestampedOffset> r = new HashMap<>();
        for (int p : partitions) {
            Log log = logs.get(p);
            log.records.entrySet().stream()
                    .filter(e -> e.getKey() >= log.logStart && !e.getValue().isBefore(time))
                    .findFirst()
                    .filter(e -> e.getKey() < log.end(level))
                    .ifPresent(e -> r.put(p, new TimestampedOffset(e.getKey(), e.getValue())));
        }
        return r;
    }

    @Override
    public Map<Integer, TimestampedOffset> firstVisibleAtOrAfter(String name, Map<Integer, Long> fromOffsets,
                                                                 Map<Integer, Long> endOffsets, Instant time,
                                                                 IsolationLevel level) {
        calls.add("scan");
        scanned.add(new TreeSet<>(fromOffsets.keySet()));
        Map<Integer, TimestampedOffset> r = new HashMap<>();
        fromOffsets.forEach((p, from) -> {
            Log log = logs.get(p);
            log.records.subMap(from, endOffsets.get(p)).entrySet().stream()
                    .filter(e -> log.visible(e.getKey(), level) && !e.getValue().isBefore(time))
                    .findFirst()
                    .ifPresent(e -> r.put(p, new TimestampedOffset(e.getKey(), e.getValue())));
        });
        return r;
    }
}
