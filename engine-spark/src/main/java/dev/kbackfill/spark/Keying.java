package dev.kbackfill.spark;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.Rejects;
import dev.kbackfill.resolver.PartitionSplit;
import dev.kbackfill.resolver.Plan;
import org.apache.spark.sql.Row;
import scala.Tuple2;

/**
 * An executor's first pass over its rows: each record read, filtered, rejected (by the run's policy, as the
 * command line's run does) or keyed for reduction. Only keys are decoded when a poison value would fail the run
 * anyway (record keys, {@code --on-error fail}): the values of superseded records are then never decoded, as in
 * the single-machine run; otherwise every value is decoded here so that no poison record hides behind a later
 * one.
 */
final class Keying implements Iterator<Tuple2<String, Raw>> {
    private final Iterator<Row> rows;
    private final RecordDecoder decoder;
    private final Rejects rejects;
    private final boolean lazy;
    private final Shapes.Filters filters;
    private final WaveCounters counters;
    private final dev.kbackfill.core.version.LogClock clock;
    /** The version field's clock for tombstones (records arrive in offset order per partition), or null. */
    private dev.kbackfill.core.record.FieldClock fields;
    private dev.kbackfill.core.read.FieldSeeds seeds;
    private Tuple2<String, Raw> next;
    private boolean done;

    /** @param logTimesBefore per source partition, the log time below its range's start (the clock's start) */
    Keying(String specJson, Shapes.Filters filters, WaveCounters counters, Map<Integer, Long> logTimesBefore,
           Iterator<Row> rows) {
        JobDefinition args = TaskContextCache.job(specJson);
        this.clock = new dev.kbackfill.core.version.LogClock(logTimesBefore);
        this.rows = rows;
        this.decoder = args.decoder();
        this.rejects = args.rejects();
        // every record's version field takes part in the reduction: values are decoded first where there is one
        // (nor with --where, which reads every record whole to decide whether it is kept)
        this.lazy = decoder.keyedByRecordKey() && decoder.versionField().isEmpty() && decoder.filter().isEmpty()
                && rejects.failsTheRun();
        if (decoder.versionField().isPresent()) {
            this.seeds = new dev.kbackfill.core.read.FieldSeeds(args.kafkaConfig(),
                    args.request().isolationLevel(), args.request().topic(), decoder);
            this.fields = new dev.kbackfill.core.record.FieldClock(seeds);
        }
        this.filters = filters;
        this.counters = counters;
    }

    @Override
    public boolean hasNext() {
        while (next == null && !done) {
            if (!rows.hasNext()) {
                done = true;
                rejects.flush(); // dead letters are durable before the wave commits
                rejects.close();
                if (seeds != null) {
                    seeds.close();
                }
                break;
            }
            SourceRecord raw = KafkaRanges.record(rows.next());
            // a Spark partition holds one source partition's range in offset order: stamped as read
            SourceRecord r = raw.withLogTime(clock.stamp(raw.partition(), raw.timestamp()));
            counters.read.get(r.partition()).add(1);
            if (r.logTime() > r.timestamp()) {
                counters.late.get(r.partition()).add(1);
            }
            counters.bytes.add((r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length));
            if (filters.filters(r)) {
                counters.filtered.get(r.partition()).add(1);
                if (fields != null) {
                    fields.passed(r, decoder);
                }
                continue;
            }
            try {
                Change c = lazy ? decoder.decodeKey(r) : decoder.decodeKept(r).orElse(null);
                if (c == null) {
                    counters.filtered.get(r.partition()).add(1); // left out by --where
                    if (fields != null) {
                        fields.passed(r, decoder);
                    }
                    continue;
                }
                if (fields != null) {
                    c = fields.stamp(c);
                }
                next = new Tuple2<>(dev.kbackfill.core.record.KeyIdentity.of(c.key()).text(),
                        new Raw(r, c.versionField()));
                counters.changes.get(r.partition()).add(1);
            } catch (DecodeException e) {
                rejects.reject(r, e); // throws when poison records fail the run
                counters.rejected.get(r.partition()).add(1);
                if (fields != null) {
                    fields.passed(r, decoder); // its field is the log's, as in the single-machine run
                }
            }
        }
        return next != null;
    }

    @Override
    public Tuple2<String, Raw> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Tuple2<String, Raw> n = next;
        next = null;
        return n;
    }

    /** Per source partition, the log time below the start of its range ({@link dev.kbackfill.resolver.LogTimes}). */
    static HashMap<Integer, Long> logTimesBefore(Map<String, Object> kafkaConfig, Plan plan,
                                                 Map<Integer, PartitionSplit> ranges) {
        Map<Integer, Long> starts = new HashMap<>();
        ranges.forEach((p, r) -> starts.put(p, r.next()));
        try (dev.kbackfill.resolver.KafkaOffsetSource offsets = dev.kbackfill.resolver.KafkaOffsetSource.create(kafkaConfig)) {
            return new HashMap<>(dev.kbackfill.resolver.LogTimes.before(offsets, plan.topic(), starts,
                    plan.request().isolationLevel()));
        }
    }
}
