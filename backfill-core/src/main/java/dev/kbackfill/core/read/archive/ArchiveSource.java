package dev.kbackfill.core.read.archive;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.read.RecordSource;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.version.LogClock;
import dev.kbackfill.resolver.Archive;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;

/**
 * A plan's ranges read from the topic's archive below the seam, then from the topic: each partition's archived part
 * first (records with the archive's offsets, handed over in the same polls, positions and log times as the topic's),
 * then every partition's rest through {@code topic}. The seam is where the plan said the topic's log started, or
 * where it starts now if retention has deleted more since and the archive holds it: each offset is read once.
 */
public final class ArchiveSource implements RecordSource {

    private final ConnectorArchive archive;
    private final Plan plan;
    private final List<BoundedReader.Range> ranges;
    private final Map<Integer, Long> logStartNow;
    private final int maxPoll;
    private final java.util.function.Function<List<BoundedReader.Range>, RecordSource> topic;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private volatile RecordSource topicSource;

    /**
     * @param logStartNow per partition, the topic's log start now
     * @param topic       opens the reader of the topic's part, given its ranges
     */
    public ArchiveSource(ConnectorArchive archive, Plan plan, List<BoundedReader.Range> ranges,
                         Map<Integer, Long> logStartNow, int maxPoll,
                         java.util.function.Function<List<BoundedReader.Range>, RecordSource> topic) {
        this.archive = archive;
        this.plan = plan;
        this.ranges = List.copyOf(ranges);
        this.logStartNow = Map.copyOf(logStartNow);
        this.maxPoll = maxPoll;
        this.topic = topic;
    }

    /** Opens the source of a run whose plan reads an archive, the topic's part read by {@code kafka}. */
    public static RecordSource open(RecordSource.Factory kafka, Plan plan, List<BoundedReader.Range> ranges,
                                    Map<String, Object> config, boolean allowDataLoss, Duration stall, int maxPoll) {
        ConnectorArchive archive = ConnectorArchive.of(plan.request()).orElseThrow();
        Map<Integer, Long> starts;
        try (dev.kbackfill.resolver.KafkaOffsetSource offsets = dev.kbackfill.resolver.KafkaOffsetSource.create(config)) {
            starts = offsets.logStartOffsets(plan.topic(), partitionsOf(ranges));
        }
        return new ArchiveSource(archive, plan, ranges, starts, maxPoll,
                topicRanges -> kafka.open(plan, topicRanges, config, allowDataLoss, stall, maxPoll));
    }

    @Override
    public void read(BoundedReader.Handler handler) throws InterruptedException {
        Map<Integer, Archive.Extent> extents = archive.extents(plan.topic(), partitionsOf(ranges));
        List<BoundedReader.Range> rest = new ArrayList<>();
        for (BoundedReader.Range r : ranges) {
            Archive.Extent e = extents.get(r.partition());
            long seam = seam(r, e);
            long before = e == null ? r.logTimeBefore()
                    : archive.timeBefore(plan.topic(), r.partition(), Math.min(r.start(), seam), r.logTimeBefore());
            long time = before;
            if (r.start() < seam) {
                time = readArchived(r, seam, before, handler);
                if (stopped.get()) {
                    return;
                }
            }
            if (Math.max(r.start(), seam) < r.end()) {
                rest.add(new BoundedReader.Range(r.partition(), Math.max(r.start(), seam), r.end(), time));
            }
        }
        if (rest.isEmpty() || stopped.get()) {
            return;
        }
        topicSource = topic.apply(rest);
        if (stopped.get()) {
            return;
        }
        topicSource.read(handler);
    }

    /**
     * Where the partition's archived part ends: the plan's seam (the log start it was made at), or the log start now
     * where retention has deleted more since; never past what the archive holds or the range's end.
     */
    private long seam(BoundedReader.Range r, Archive.Extent e) {
        if (e == null) {
            return r.start();
        }
        long planned = plan.partition(r.partition()).map(PartitionRange::logStart).orElse(r.start());
        long now = logStartNow.getOrDefault(r.partition(), planned);
        return Math.min(r.end(), Math.min(e.end(), Math.max(planned, now)));
    }

    /** Hands the archived records of {@code [r.start, seam)} over, a poll at a time; returns the log time reached. */
    private long readArchived(BoundedReader.Range r, long seam, long before, BoundedReader.Handler handler)
            throws InterruptedException {
        LogClock clock = new LogClock(Map.of(r.partition(), before));
        long[] time = {before};
        List<SourceRecord> poll = new ArrayList<>();
        InterruptedException[] interrupted = {null};
        archive.read(plan.topic(), r.partition(), r.start(), seam, a -> {
            time[0] = clock.stamp(r.partition(), a.timestamp());
            poll.add(new SourceRecord(plan.topic(), r.partition(), a.offset(), a.timestamp(), time[0], a.key(),
                    a.value(), a.headers()));
            if (poll.size() < maxPoll) {
                return true;
            }
            try {
                handler.accept(List.copyOf(poll), Map.of(r.partition(), a.offset() + 1), Map.of());
            } catch (InterruptedException e) {
                interrupted[0] = e;
                return false;
            }
            poll.clear();
            return !stopped.get();
        });
        if (interrupted[0] != null) {
            throw interrupted[0];
        }
        if (!stopped.get()) {
            handler.accept(List.copyOf(poll), Map.of(r.partition(), seam), Map.of());
        }
        return time[0];
    }

    private static java.util.Set<Integer> partitionsOf(List<BoundedReader.Range> ranges) {
        java.util.Set<Integer> ps = new java.util.TreeSet<>();
        ranges.forEach(r -> ps.add(r.partition()));
        return ps;
    }

    @Override
    public void stop() {
        stopped.set(true);
        RecordSource s = topicSource;
        if (s != null) {
            s.stop();
        }
    }

    @Override
    public void close() {
        RecordSource s = topicSource;
        if (s != null) {
            s.close();
        }
    }
}
