package dev.kbackfill.core.read;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.version.LogClock;
import dev.kbackfill.resolver.ClientConfigs;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads exactly the ranges {@code [start, end)} of one topic and stops: a consumer with {@code assign} and
 * {@code seek}, no {@code group.id}, auto-commit off and {@code auto.offset.reset=none}. It never joins a group
 * and never commits, so it cannot disturb a live consumer group.
 *
 * <p>A partition is finished when the consumer's <em>position</em> reaches {@code end}, not when a record at
 * {@code end - 1} arrives: transaction markers, aborted records and compaction gaps mean there may be no such
 * record, and a reader waiting for it would never stop. Records at {@code end} or later are dropped.
 */
public final class BoundedReader implements RecordSource {

    /**
     * One partition's range to read.
     *
     * @param logTimeBefore the highest timestamp of the partition's records below {@code start}
     *                      ({@link dev.kbackfill.resolver.LogTimes}), or {@link LogClock#NONE}: where the log
     *                      time of the records read starts
     */
    public record Range(int partition, long start, long end, long logTimeBefore) {
        /** A range whose log time starts from nothing (reads where the version of a record does not matter). */
        public Range(int partition, long start, long end) {
            this(partition, start, end, LogClock.NONE);
        }
    }

    /** The log clocks of {@code ranges}, each starting where its range starts. */
    public static LogClock clock(java.util.Collection<Range> ranges) {
        Map<Integer, Long> before = new HashMap<>();
        ranges.forEach(r -> before.put(r.partition(), r.logTimeBefore()));
        return new LogClock(before);
    }

    /** Receives what one poll read: its records in offset order per partition, and every position after them. */
    public interface Handler {
        void accept(List<SourceRecord> records, Map<Integer, Long> positions, Map<Integer, Long> lostOffsets)
                throws InterruptedException;
    }

    private final String topic;
    private final Consumer<byte[], byte[]> consumer;
    private final Map<Integer, Range> ranges = new TreeMap<>();
    private final boolean allowDataLoss;
    private final Duration stallTimeout;
    private final AtomicBoolean stopped = new AtomicBoolean();

    /**
     * @param clientConfig  Kafka client settings; a {@code group.id} is refused
     * @param allowDataLoss whether offsets deleted since planning are skipped (and reported) instead of failing
     * @param stallTimeout  how long the reader may see no progress before it fails
     */
    public BoundedReader(String topic, Map<String, Object> clientConfig, IsolationLevel isolationLevel,
                         List<Range> ranges, boolean allowDataLoss, Duration stallTimeout) {
        this(topic, new KafkaConsumer<>(consumerConfig(clientConfig, isolationLevel), new ByteArrayDeserializer(),
                new ByteArrayDeserializer()), ranges, allowDataLoss, stallTimeout);
    }

    /**
     * Reads through a consumer made elsewhere: the seam unit tests use (Kafka's {@code MockConsumer}). The
     * consumer must be group-less, without auto-commit.
     */
    public BoundedReader(String topic, Consumer<byte[], byte[]> consumer, List<Range> ranges, boolean allowDataLoss,
                         Duration stallTimeout) {
        this.topic = topic;
        this.allowDataLoss = allowDataLoss;
        this.stallTimeout = stallTimeout;
        ranges.forEach(r -> this.ranges.put(r.partition(), r));
        this.consumer = consumer;
    }

    /** The consumer settings: the user's, made group-less and bounded, with larger fetches than the defaults. */
    /**
     * The client settings with {@code client.id} naming the job ({@code kbackfill-JOB}) unless the user set one: the
     * broker's request logs and quotas (e.g. {@code kafka-configs --entity-type clients}) can then target a job.
     */
    public static Map<String, Object> withJobClientId(Map<String, Object> clientConfig, String job) {
        Map<String, Object> config = new java.util.HashMap<>(clientConfig);
        config.putIfAbsent("client.id", "kbackfill-" + job);
        return config;
    }

    public static Map<String, Object> consumerConfig(Map<String, Object> clientConfig, IsolationLevel isolationLevel) {
        if (clientConfig.containsKey(ConsumerConfig.GROUP_ID_CONFIG)) {
            throw new IllegalArgumentException("group.id is not allowed: a backfill never joins or commits to a group");
        }
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        config.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 4 * 1024 * 1024);
        config.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 16 * 1024 * 1024);
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "kbackfill-reader");
        // a bounded read asks for records that are there: a fetch that finds none answers at once instead of after
        // the default half second. The last one is the fetch that closes the session when the reader closes, which
        // a 1,000-record run paid in full (1.9 s to 1.4 s of wall time)
        config.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
        // no client telemetry (KIP-714): its metrics collector renames every metric by regular expression when the
        // consumer closes, and a backfill's metrics are its own report (--metrics-file, --metrics-otlp); nor, unless
        // the settings name reporters, JMX beans of every fetch metric (about 10 ms of a 1,000-record run)
        config.put(ConsumerConfig.ENABLE_METRICS_PUSH_CONFIG, false);
        config.put(ConsumerConfig.METRIC_REPORTER_CLASSES_CONFIG, "");
        config.putAll(ClientConfigs.only(clientConfig, ConsumerConfig.configNames()));
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolationLevel.toString());
        return config;
    }

    /**
     * Reads every range to its end, handing each poll's records to {@code handler}, then returns.
     *
     * @throws ReadException if offsets were deleted since planning (unless loss is allowed) or no progress is
     *                       made for the stall timeout; the message names the partition and offsets
     */
    @Override
    public void read(Handler handler) throws InterruptedException {
        Map<TopicPartition, Long> pending = new HashMap<>();
        for (Range r : ranges.values()) {
            if (r.start() < r.end()) {
                pending.put(new TopicPartition(topic, r.partition()), r.start());
            }
        }
        if (pending.isEmpty()) {
            return;
        }
        consumer.assign(pending.keySet());
        pending.forEach(consumer::seek);
        LogClock clock = clock(ranges.values());
        long lastProgress = System.nanoTime();
        while (!pending.isEmpty() && !stopped.get()) {
            Map<Integer, Long> lost = new HashMap<>();
            ConsumerRecords<byte[], byte[]> polled;
            try {
                polled = consumer.poll(Duration.ofMillis(500));
            } catch (OffsetOutOfRangeException e) {
                handleLoss(e, lost, pending);
                if (!lost.isEmpty()) {
                    lastProgress = System.nanoTime(); // skipping deleted offsets moves the partition on
                }
                handler.accept(List.of(), Map.of(), lost);
                checkStall(pending, lastProgress);
                continue;
            } catch (WakeupException e) {
                if (stopped.get()) {
                    return;
                }
                throw e;
            }
            List<SourceRecord> records = inRange(polled, clock);
            Map<Integer, Long> positions = new HashMap<>();
            List<TopicPartition> finished = new ArrayList<>();
            for (Map.Entry<TopicPartition, Long> e : pending.entrySet()) {
                TopicPartition tp = e.getKey();
                long end = ranges.get(tp.partition()).end();
                // Done when the position reaches end: control records (transaction markers) can follow the last
                // data record, so there may be no record at end - 1.
                long position = Math.min(consumer.position(tp), end);
                positions.put(tp.partition(), position);
                if (position > e.getValue()) {
                    e.setValue(position);
                    lastProgress = System.nanoTime();
                }
                if (position >= end) {
                    finished.add(tp);
                }
            }
            finished.forEach(pending::remove);
            if (!finished.isEmpty()) {
                consumer.pause(finished);
            }
            handler.accept(records, positions, lost);
            checkStall(pending, lastProgress);
        }
    }

    /**
     * The polled records within their partition's range, as source records. A method of its own, so that the JIT
     * compiles this per-record loop by itself rather than the whole poll loop over and over (on-stack replacement).
     */
    private List<SourceRecord> inRange(ConsumerRecords<byte[], byte[]> polled, LogClock clock) {
        List<SourceRecord> records = new ArrayList<>(polled.count());
        for (ConsumerRecord<byte[], byte[]> r : polled) {
            Range range = ranges.get(r.partition());
            if (r.offset() >= range.end() || r.offset() < range.start()) {
                continue; // past the end of the range: the next one's business, never this backfill's
            }
            records.add(new SourceRecord(r.topic(), r.partition(), r.offset(), r.timestamp(),
                    clock.stamp(r.partition(), r.timestamp()), r.key(), r.value(), r.headers()));
        }
        return records;
    }

    /** Fails when no partition has moved for the stall timeout, whatever path the loop took. */
    private void checkStall(Map<TopicPartition, Long> pending, long lastProgress) {
        if (!pending.isEmpty() && System.nanoTime() - lastProgress > stallTimeout.toNanos()) {
            StringBuilder where = new StringBuilder();
            pending.forEach((tp, pos) -> where.append(where.length() == 0 ? "" : ", ").append("partition ")
                    .append(tp.partition()).append(" at offset ").append(pos).append(" (end ")
                    .append(ranges.get(tp.partition()).end()).append(")"));
            throw ReadException.stalled("no progress reading " + topic + " for " + stallTimeout.toSeconds() + " s: "
                    + where);
        }
    }

    /**
     * An offset out of range: below the log start, records were deleted (data loss: fail, or skip and count them
     * where allowed); at or past the log end, the log was truncated or the offsets belong to another log, which no
     * amount of waiting or skipping mends: fail, naming both.
     */
    private void handleLoss(OffsetOutOfRangeException e, Map<Integer, Long> lost, Map<TopicPartition, Long> pending) {
        Map<TopicPartition, Long> out = e.offsetOutOfRangePartitions();
        Set<TopicPartition> partitions = out.keySet();
        Map<TopicPartition, Long> logStarts = consumer.beginningOffsets(partitions);
        Map<TopicPartition, Long> logEnds = consumer.endOffsets(partitions);
        StringBuilder pastEnd = new StringBuilder();
        StringBuilder deleted = new StringBuilder();
        for (TopicPartition tp : partitions) {
            long from = out.get(tp);
            long logStart = logStarts.getOrDefault(tp, 0L);
            long logEnd = logEnds.getOrDefault(tp, Long.MAX_VALUE);
            if (from >= logStart && from > logEnd) {
                pastEnd.append(pastEnd.length() == 0 ? "" : "; ").append("partition ").append(tp.partition())
                        .append(" at offset ").append(from).append(", log end ").append(logEnd);
            } else {
                deleted.append(deleted.length() == 0 ? "" : "; ").append("partition ").append(tp.partition())
                        .append(" at offset ").append(from).append(" (log start now ").append(logStart).append(")");
            }
        }
        if (pastEnd.length() > 0) {
            throw new ReadException("offsets of " + topic + " to read lie past the end of the log: " + pastEnd
                    + "; the log was truncated, or the plan belongs to another log (a recreated topic); make a new plan",
                    e);
        }
        if (!allowDataLoss) {
            throw new ReadException("records of " + topic + " were deleted (retention or deleteRecords) before they "
                    + "were read: " + deleted + "; rerun with " + dev.kbackfill.resolver.Wording.current().name(
                    dev.kbackfill.resolver.Wording.Term.ALLOW_DATA_LOSS) + " to skip what is gone", e);
        }
        for (TopicPartition tp : partitions) {
            long from = out.get(tp);
            long to = Math.min(logStarts.get(tp), ranges.get(tp.partition()).end());
            lost.merge(tp.partition(), Math.max(0, to - from), Long::sum);
            consumer.seek(tp, Math.max(from, to));
        }
    }

    @Override
    public void stop() {
        stopped.set(true);
        consumer.wakeup();
    }

    @Override
    public void close() {
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
    }
}
