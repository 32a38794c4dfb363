package dev.kbackfill.spark;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.run.JobDefinition;
import dev.kbackfill.core.run.Rejects;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.sink.delta.DeltaEngineSupport;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The survivors of a wave as rows of the table: values decoded, converted to the columns' types, keyed by their
 * key's ledger text; a value the table cannot hold (or cannot be decoded) is a poison record for the run's policy.
 */
final class EntryRows implements Iterator<Entry> {
    private final Iterator<Raw> raws;
    private final RecordDecoder decoder;
    private final Rejects rejects;
    private final StructType table;
    private final List<String> keys;
    private final SinkSettings.MetadataColumns meta;
    private final boolean soft;
    private final boolean ignoreUnknown;
    /** The columns Delta computes: a record's field of that name is left to Delta. */
    private final java.util.Set<String> computed;
    private final String path;
    private final io.delta.kernel.types.DataType[] kernelTypes;
    private Entry next;
    private boolean done;

    EntryRows(String specJson, StructType table, List<String> keys, SinkSettings.MetadataColumns meta, boolean soft,
         boolean ignoreUnknown, java.util.Set<String> computed, String path, WaveCounters counters, Iterator<Raw> raws) {
        JobDefinition args = TaskContextCache.job(specJson);
        this.raws = raws;
        this.decoder = args.decoder();
        this.rejects = args.rejects();
        this.table = table;
        this.keys = keys;
        this.meta = meta;
        this.soft = soft;
        this.ignoreUnknown = ignoreUnknown;
        this.computed = computed;
        this.path = path;
        // the table's schema read as the Delta sink reads any table's (the protocol's schema string is Spark's JSON)
        this.kernelTypes = DeltaEngineSupport.columnTypes(table.json()).toArray(new io.delta.kernel.types.DataType[0]);
    }

    @Override
    public boolean hasNext() {
        while (next == null && !done) {
            if (!raws.hasNext()) {
                done = true;
                rejects.flush();
                rejects.close();
                break;
            }
            Raw raw = raws.next();
            SourceRecord r = raw.record();
            try {
                next = entry(decoder.decode(r), r, raw.field);
            } catch (DecodeException | IllegalArgumentException e) {
                RuntimeException why = e instanceof DecodeException ? e : new IllegalArgumentException(
                        "the Delta table at " + path + " cannot hold " + r.coordinates() + ": " + e.getMessage(), e);
                rejects.reject(r, why); // throws when poison records fail the run
                if (!(e instanceof DecodeException)) {
                    next = Entry.refusedByTable(r.partition());
                }
            }
        }
        return next != null;
    }

    @Override
    public Entry next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Entry n = next;
        next = null;
        return n;
    }

    private Entry entry(Change c, SourceRecord r, Comparable<?> field) {
        Object[] values = new Object[table.size() + 1];
        List<Object> physicalKey = new ArrayList<>(keys.size());
        for (String k : keys) {
            if (!c.key().containsKey(k)) {
                throw new IllegalArgumentException("the key at partition " + c.partition() + " offset " + c.offset()
                        + " has no field " + k + " (fields " + c.key().keySet() + ")");
            }
            int i = index(k);
            if (i < 0) {
                throw new IllegalStateException("key column " + k + " is not in the Delta table at " + path);
            }
            Object phys = DeltaEngineSupport.physical(c.key().get(k), kernelTypes[i], k);
            physicalKey.add(phys);
            values[i] = SparkDeltaTypes.spark(phys, table.fields()[i].dataType());
        }
        if (c.isTombstone()) {
            if (soft) {
                values[index(meta.deleted())] = true;
            }
        } else {
            for (Map.Entry<String, Object> v : c.values().entrySet()) {
                if (c.key().containsKey(v.getKey())) {
                    continue;
                }
                int i = index(v.getKey());
                if (i < 0) {
                    if (ignoreUnknown || computed.contains(v.getKey())) {
                        continue;
                    }
                    throw new IllegalStateException("value field '" + v.getKey() + "' (first at partition "
                            + c.partition() + " offset " + c.offset() + ") has no column in the Delta table at "
                            + path + "; pass --create-table to have it added (on the Spark engine, through "
                            + "ALTER TABLE), or --ignore-unknown-fields to skip such fields");
                }
                values[i] = SparkDeltaTypes.spark(DeltaEngineSupport.physical(v.getValue(), kernelTypes[i], v.getKey()),
                        table.fields()[i].dataType());
            }
            int deleted = index(meta.deleted());
            if (deleted >= 0) {
                values[deleted] = false;
            }
        }
        set(values, meta.topic(), r.topic());
        set(values, meta.partition(), (long) r.partition());
        set(values, meta.offset(), r.offset());
        set(values, meta.timestamp(), Instant.ofEpochMilli(r.timestamp()));
        set(values, meta.logTime(), Instant.ofEpochMilli(r.logTime()));
        set(values, meta.version(), field);
        values[table.size()] = c.isTombstone();
        String key = DeltaEngineSupport.keyText(keys, physicalKey);
        return new Entry(key, r.topic(), r.partition(), r.offset(), r.timestamp(), r.logTime(), c.isTombstone(),
                RowFactory.create(values), field);
    }

    private int index(String column) {
        for (int n = 0; n < table.size(); n++) {
            if (table.fields()[n].name().equals(column)) {
                return n;
            }
        }
        return -1;
    }

    private void set(Object[] values, String column, Object value) {
        int i = index(column);
        if (i >= 0) {
            values[i] = value;
        }
    }

    /** The columns of a wave's changes, decoded by the executors (none for a wave without any). */
    static RowShape shapeOf(String specJson, JavaRDD<Raw> survivors) {
        return survivors.mapPartitions(raws -> shapeOf(specJson, raws))
                .fold(new RowShape.Accumulator(), RowShape.Accumulator::merge).shape();
    }

    /** The columns of the records of one Spark partition of a wave's survivors. */
    static Iterator<RowShape.Accumulator> shapeOf(String specJson, Iterator<Raw> raws) {
        return List.of(Shapes.accumulate(TaskContextCache.job(specJson).decoder(), new Iterator<SourceRecord>() {
            @Override
            public boolean hasNext() {
                return raws.hasNext();
            }

            @Override
            public SourceRecord next() {
                return raws.next().record();
            }
        }, null)).iterator();
    }
}
