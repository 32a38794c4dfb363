package dev.kbackfill.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.kbackfill.core.read.BoundedReader;
import dev.kbackfill.core.read.RecordSource;
import dev.kbackfill.core.record.SourceRecord;

/**
 * One partition's records as a Spark task reads them with Spark's Kafka source, handed to a run on another thread:
 * the task's thread pumps its rows into the queue (Spark's iterators belong to the task's thread), the run reads
 * them from it. Records below the run's start (committed by an earlier attempt) are skipped; when the task's rows
 * of the partition end, the range was read to its end (compaction gaps, transaction markers and aborted records
 * included), so the position is the range's end.
 */
final class QueueSource implements RecordSource {

    /** The end of the partition's rows. */
    static final Object END = new Object();

    private final BlockingQueue<Object> queue;
    private final BoundedReader.Range range;
    private volatile boolean stopped;

    QueueSource(BlockingQueue<Object> queue, BoundedReader.Range range) {
        this.queue = queue;
        this.range = range;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void read(BoundedReader.Handler handler) throws InterruptedException {
        dev.kbackfill.core.version.LogClock clock = BoundedReader.clock(List.of(range));
        while (!stopped) {
            Object item = queue.poll(200, TimeUnit.MILLISECONDS);
            if (item == null) {
                continue;
            }
            if (item == END) {
                handler.accept(List.of(), Map.of(range.partition(), range.end()), Map.of());
                return;
            }
            List<SourceRecord> chunk = (List<SourceRecord>) item;
            List<SourceRecord> kept = new ArrayList<>(chunk.size());
            for (SourceRecord r : chunk) {
                if (r.offset() >= range.start() && r.offset() < range.end()) {
                    // rows come in offset order (one Spark partition per source partition): stamped as they come
                    kept.add(r.withLogTime(clock.stamp(r.partition(), r.timestamp())));
                }
            }
            if (!kept.isEmpty()) {
                handler.accept(kept, Map.of(range.partition(), kept.get(kept.size() - 1).offset() + 1), Map.of());
            }
        }
    }

    @Override
    public void stop() {
        stopped = true;
    }

    @Override
    public void close() {
        stopped = true;
    }
}
