package dev.kbackfill.sink.iceberg;

import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.verify.TargetLookup;
import dev.kbackfill.core.verify.TargetRow;
import dev.kbackfill.core.verify.Verification;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.sink.lake.LakeRows;
import dev.kbackfill.sink.lake.LakeType;
import dev.kbackfill.sink.lake.LiveRows;
import dev.kbackfill.sink.lake.MetadataOrdinals;
import dev.kbackfill.sink.lake.TombstoneLedger;
import dev.kbackfill.sink.lake.ValueMismatch;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;

/**
 * What an Iceberg table holds for the keys of a verified range, from one snapshot (the current one when verification
 * starts): per chunk of keys, the data files whose bounds may hold one of them are probed as a write probes them (key
 * and metadata columns, the table's deletes applied, every partition), the whole row read again only for a live row
 * of a wanted key, and the tombstone ledger is consulted. Values compare in the table's physical form: each expected
 * value converted by its column's type exactly as the sink writes it.
 */
final class IcebergTargetLookup implements TargetLookup {

    private final SinkSettings settings;
    private final Table table;
    private final Snapshot snapshot;
    private final List<Types.NestedField> columns;
    private final LakeType[] types;
    private final MetadataOrdinals ord;
    private final String shown;
    private final TombstoneLedger ledger;
    private final boolean ledgered;
    private final AtomicLong rows = new AtomicLong();

    IcebergTargetLookup(Table table, org.apache.iceberg.Snapshot head, SinkSettings settings, String shown) {
        this.settings = settings;
        this.table = table;
        this.snapshot = head;
        this.columns = table.schema().columns();
        this.types = new LakeType[columns.size()];
        for (int i = 0; i < types.length; i++) {
            types[i] = IcebergTypes.lakeType(columns.get(i).type()).orElse(null);
        }
        this.ord = MetadataOrdinals.of(this::ordinal, settings.metadata());
        this.shown = shown;
        this.ledger = new TableState(table, head).ledger();
        this.ledgered = ledger.holdsAny();
    }

    @Override
    public boolean hasColumn(String column) {
        return ordinal(column) >= 0;
    }

    @Override
    public int keysPerLookup() {
        return 200_000; // every chunk probes the files its keys may be in: fewer, larger chunks read less
    }

    private int ordinal(String name) {
        for (int i = 0; i < columns.size(); i++) {
            if (columns.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public Map<KeyIdentity, TargetRow> lookup(List<Change> expected, String topic,
                                              java.util.function.Function<Change, Map<String, Object>> values) {
        return IcebergDamage.FORMAT.reading(shown, () -> lookupIn(expected, topic, values));
    }

    private Map<KeyIdentity, TargetRow> lookupIn(List<Change> expected, String topic,
                                                 java.util.function.Function<Change, Map<String, Object>> values) {
        List<String> keyFields = TargetLookup.keyFields(expected);
        int[] keyOrdinals = new int[keyFields.size()];
        for (int k = 0; k < keyOrdinals.length; k++) {
            keyOrdinals[k] = ordinal(keyFields.get(k));
            if (keyOrdinals[k] < 0) {
                throw new SinkConfigException("the Iceberg table " + shown + " has no column for key field '"
                        + keyFields.get(k) + "'; check --key-fields");
            }
        }
        LakeRows lakeRows = new LakeRows(columns.stream().map(Types.NestedField::name).toList(), types,
                columns.stream().map(Types.NestedField::type).toArray(), keyOrdinals);
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
        if (snapshot != null) {
            IcebergFiles files = new IcebergFiles(table);
            List<IcebergFiles.Hit> hits = files.probe(snapshot, keyOrdinals, ord.present(), incoming.keySet());
            List<IcebergFiles.Hit> live = new ArrayList<>();
            for (IcebergFiles.Hit h : hits) {
                rows.incrementAndGet();
                if (ord.deleted() >= 0 && Boolean.TRUE.equals(h.row()[ord.deleted()])) {
                    Change c = incoming.get(LakeRows.keyOf(h.row(), keyOrdinals));
                    found.merge(KeyIdentity.of(c.key()), TargetRow.deleted(ord.version(h.row())), TargetRow::merge);
                } else {
                    live.add(h);
                }
            }
            List<LiveRows.Column> judged = columnsOf(lakeRows);
            for (Object[] row : files.readWhole(live).values()) {
                Change c = incoming.get(LakeRows.keyOf(row, keyOrdinals));
                found.merge(KeyIdentity.of(c.key()), LiveRows.judge(judged, ord, keyOrdinals, settings,
                        values.apply(c), row, ord.version(row), Verification.version(c, topic)), TargetRow::merge);
            }
        }
        if (ledgered) {
            incoming.forEach((key, c) -> {
                Version deleted = ledger.deleted(lakeRows.ledgerKey(key));
                if (deleted != null) {
                    found.merge(KeyIdentity.of(c.key()), TargetRow.deleted(deleted), TargetRow::merge);
                }
            });
        }
        return found;
    }

    /** The table's columns as verification reads them, values converted as {@code lakeRows} writes them. */
    private List<LiveRows.Column> columnsOf(LakeRows lakeRows) {
        List<LiveRows.Column> out = new ArrayList<>();
        for (int i = 0; i < columns.size(); i++) {
            String name = columns.get(i).name();
            LakeType type = types[i];
            out.add(new LiveRows.Column() {
                @Override
                public String name() {
                    return name;
                }

                @Override
                public Object physical(Object value) throws ValueMismatch {
                    return lakeRows.physicalOf(name, value);
                }

                @Override
                public Object readable(Object v) {
                    if (v == null || type == null) {
                        return v;
                    }
                    if (type.kind() == LakeType.Kind.TIMESTAMP) {
                        return LiveRows.instantOfMicros(((Number) v).longValue());
                    }
                    return type.kind() == LakeType.Kind.DATE ? LocalDate.ofEpochDay(((Number) v).longValue()) : v;
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
