package dev.kbackfill.sink.delta;

import dev.kbackfill.sink.lake.ValueMismatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.verify.TargetLookup;
import dev.kbackfill.core.verify.TargetRow;
import dev.kbackfill.core.verify.Verification;
import dev.kbackfill.core.version.Version;

import io.delta.kernel.Snapshot;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;

/**
 * What a Delta table holds for the keys of a verified range, from one snapshot (the latest when verification
 * starts): per chunk of keys, the data files whose statistics may hold one of them are probed as a write probes them
 * (key columns first, a whole row only for a wanted key), and the tombstone ledger is consulted. Values compare in
 * the table's physical form: each expected value is converted by the column's type exactly as the sink writes it.
 */
final class DeltaTargetLookup implements TargetLookup {

    private final SinkSettings settings;
    private final Engine engine;
    private final Snapshot snapshot;
    private final StructType schema;
    private final dev.kbackfill.sink.lake.MetadataOrdinals ord;
    private final String path;
    private final DeltaTombstones ledger;
    private final boolean ledgered;
    private final AtomicLong rows = new AtomicLong();
    private final List<dev.kbackfill.sink.lake.LiveRows.Column> columns;

    DeltaTargetLookup(Engine engine, Snapshot snapshot, SinkSettings settings, String path) {
        SinkSettings.MetadataColumns meta = settings.metadata();
        this.settings = settings;
        this.engine = engine;
        this.snapshot = snapshot;
        this.schema = snapshot.getSchema();
        this.ord = dev.kbackfill.sink.lake.MetadataOrdinals.of(schema::indexOf, meta);
        this.path = path;
        this.ledger = new DeltaTombstones(snapshot);
        this.ledgered = ledger.holdsAny();
        this.columns = columns();
    }

    @Override
    public boolean hasColumn(String column) {
        return schema.indexOf(column) >= 0;
    }

    @Override
    public int keysPerLookup() {
        return 200_000; // every chunk probes the files its keys may be in: fewer, larger chunks read less
    }

    @Override
    public Map<KeyIdentity, TargetRow> lookup(List<Change> expected, String topic,
                                              java.util.function.Function<Change, Map<String, Object>> values) {
        return DeltaDamage.FORMAT.reading(path, () -> lookupIn(expected, topic, values));
    }

    private Map<KeyIdentity, TargetRow> lookupIn(List<Change> expected, String topic,
                                                 java.util.function.Function<Change, Map<String, Object>> values) {
        int[] keyOrdinals = keyOrdinals(TargetLookup.keyFields(expected));
        dev.kbackfill.sink.lake.LakeRows lakeRows = DeltaTable.rows(schema, keyOrdinals);
        Map<List<Object>, Change> incoming = new HashMap<>();
        for (Change c : expected) {
            try {
                incoming.put(lakeRows.key(c), c);
            } catch (ValueMismatch e) {
                // a key the table cannot hold has no row in it
            }
        }
        Map<KeyIdentity, TargetRow> found = new HashMap<>();
        if (incoming.isEmpty()) {
            return found;
        }
        try {
            io.delta.kernel.Scan scan = snapshot.getScanBuilder().build();
            Row scanState = scan.getScanState(engine);
            List<Callable<List<Object[]>>> probes = new ArrayList<>();
            for (Row scanFile : DeltaPruning.candidateFiles(engine, scan, schema, keyOrdinals,
                snapshot.getPartitionColumnNames(), incoming.keySet())) {
                probes.add(() -> {
                    List<Object[]> hits = new ArrayList<>();
                    DeltaFiles.scan(engine, scanState, scanFile, schema, keyOrdinals, incoming::containsKey,
                            (position, row) -> hits.add(row));
                    return hits;
                });
            }
            for (List<Object[]> hits : dev.kbackfill.sink.lake.ParallelFiles.each(probes, Runtime.getRuntime().availableProcessors())) {
                for (Object[] row : hits) {
                    rows.incrementAndGet();
                    Change c = incoming.get(DeltaTable.keyOf(row, keyOrdinals));
                    if (c != null) {
                        found.merge(KeyIdentity.of(c.key()), rowOf(c, row, topic, keyOrdinals, values), TargetRow::merge);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Delta table at " + path + ": " + e.getMessage(), e);
        }
        incoming.forEach((key, c) -> ledgered(lakeRows, key, c, found));
        return found;
    }

    /** A stored row of the key of {@code c}, judged against it. */
    private TargetRow rowOf(Change c, Object[] row, String topic, int[] keyOrdinals,
                            java.util.function.Function<Change, Map<String, Object>> values) {
        Version version = ord.version(row);
        boolean live = ord.deleted() < 0 || !Boolean.TRUE.equals(row[ord.deleted()]);
        return live ? dev.kbackfill.sink.lake.LiveRows.judge(columns, ord, keyOrdinals, settings, values.apply(c), row,
                version, Verification.version(c, topic)) : TargetRow.deleted(version);
    }

    /** Adds the delete the tombstone ledger holds for the key (its physical values), if any. */
    private void ledgered(dev.kbackfill.sink.lake.LakeRows lakeRows, List<Object> key, Change c,
                          Map<KeyIdentity, TargetRow> found) {
        if (ledgered) {
            Version deleted = ledger.deleted(lakeRows.ledgerKey(key));
            if (deleted != null) {
                found.merge(KeyIdentity.of(c.key()), TargetRow.deleted(deleted), TargetRow::merge);
            }
        }
    }

    private int[] keyOrdinals(List<String> keyFields) {
        int[] keyOrdinals = new int[keyFields.size()];
        for (int k = 0; k < keyOrdinals.length; k++) {
            keyOrdinals[k] = schema.indexOf(keyFields.get(k));
            if (keyOrdinals[k] < 0) {
                throw new SinkConfigException("the Delta table at " + path + " has no column for key field '"
                        + keyFields.get(k) + "'; check --key-fields");
            }
        }
        return keyOrdinals;
    }

    /**
     * One pass over every data file (a range's keys in no order prune none), the key columns of every row read and
     * the whole row kept only for a key the range may hold; each bucket then judged from its rows as a probe would.
     */
    @Override
    public java.util.Optional<Scan> scan(List<String> keyFields) {
        int[] keyOrdinals = keyOrdinals(keyFields);
        dev.kbackfill.sink.lake.LakeRows lakeRows = DeltaTable.rows(schema, keyOrdinals);
        return java.util.Optional.of(new Scan() {
            @Override
            public String joinKey(Change c) {
                try {
                    return joinText(lakeRows.key(c));
                } catch (ValueMismatch e) {
                    return null; // a key the table cannot hold has no row in it
                }
            }

            @Override
            public void rows(java.util.function.Predicate<String> wanted, java.util.function.BiConsumer<String, byte[]> out) {
                try {
                    io.delta.kernel.Scan scan = snapshot.getScanBuilder().build();
                    Row scanState = scan.getScanState(engine);
                    for (Row scanFile : DeltaFiles.scanFiles(engine, scan)) {
                        DeltaFiles.scan(engine, scanState, scanFile, schema, keyOrdinals, k -> wanted.test(joinText(k)),
                                (position, row) -> out.accept(joinText(DeltaTable.keyOf(row, keyOrdinals)), RowCodec.encode(row)));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read the Delta table at " + path + ": " + e.getMessage(), e);
                }
            }

            @Override
            public Map<KeyIdentity, TargetRow> judge(List<Change> expected, Map<String, List<byte[]>> streamed,
                                                     String topic,
                                                     java.util.function.Function<Change, Map<String, Object>> values) {
                Map<KeyIdentity, TargetRow> found = new HashMap<>();
                for (Change c : expected) {
                    List<Object> key;
                    try {
                        key = lakeRows.key(c);
                    } catch (ValueMismatch e) {
                        continue;
                    }
                    for (byte[] encoded : streamed.getOrDefault(joinText(key), List.of())) {
                        rows.incrementAndGet();
                        found.merge(KeyIdentity.of(c.key()), rowOf(c, RowCodec.decode(encoded), topic, keyOrdinals,
                                values), TargetRow::merge);
                    }
                    ledgered(lakeRows, key, c, found);
                }
                return found;
            }
        });
    }

    /**
     * A key's physical values as one text, equal exactly when the values are (types told apart). Not the tombstone
     * ledger's {@link dev.kbackfill.sink.lake.TombstoneLedger#keyText}: that is its stored form (JSON built per key),
     * and this one is computed for every row of the table in one pass.
     */
    static String joinText(List<Object> key) {
        StringBuilder sb = new StringBuilder();
        for (Object v : key) {
            if (v == null) {
                sb.append('n');
            } else if (v instanceof java.nio.ByteBuffer b) {
                byte[] bytes = new byte[b.remaining()];
                b.duplicate().get(bytes);
                sb.append('b').append(java.util.Base64.getEncoder().encodeToString(bytes));
            } else if (v instanceof BigDecimal d) {
                sb.append('d').append(d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString());
            } else {
                sb.append(v.getClass().getSimpleName().charAt(0)).append(v);
            }
            sb.append('\u0000');
        }
        return sb.toString();
    }

    /** The table's columns as verification reads them, values converted as the sink writes them. */
    private List<dev.kbackfill.sink.lake.LiveRows.Column> columns() {
        List<dev.kbackfill.sink.lake.LiveRows.Column> out = new ArrayList<>();
        for (int i = 0; i < schema.length(); i++) {
            String name = schema.at(i).getName();
            DataType type = schema.at(i).getDataType();
            out.add(new dev.kbackfill.sink.lake.LiveRows.Column() {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public Object physical(Object value) throws ValueMismatch {
                    return DeltaTypes.physical(value, type, name);
                }

                @Override
                public Object readable(Object v) {
                    if (v == null) {
                        return null;
                    }
                    if (type instanceof TimestampType || type instanceof TimestampNTZType) {
                        return dev.kbackfill.sink.lake.LiveRows.instantOfMicros(((Number) v).longValue());
                    }
                    return type instanceof DateType ? LocalDate.ofEpochDay(((Number) v).longValue()) : v;
                }
            });
        }
        return out;
    }

    @Override
    public long rowsRead() {
        return rows.get();
    }
}
