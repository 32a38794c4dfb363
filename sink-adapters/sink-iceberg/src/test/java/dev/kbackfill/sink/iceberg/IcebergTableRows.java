package dev.kbackfill.sink.iceberg;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/** An Iceberg table's live rows read back with Iceberg's own generic reader (every kind of delete applied). */
final class IcebergTableRows {

    private IcebergTableRows() {
    }

    /** The rows in the sink contract's form: {@code key=status/amount@partition:offset[ deleted]}, sorted. */
    static List<String> contractRows(Table table) throws Exception {
        table.refresh();
        List<String> out = new ArrayList<>();
        try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
            for (Record r : rows) {
                BigDecimal amount = (BigDecimal) r.getField("amount");
                out.add(r.getField("kafka_key") + "=" + r.getField("status") + "/" + (amount == null ? null
                        : amount.stripTrailingZeros().toPlainString()) + "@" + r.getField("kafka_partition") + ":"
                        + r.getField("kafka_offset") + (table.schema().findField("kafka_deleted") != null
                        && Boolean.TRUE.equals(r.getField("kafka_deleted")) ? " deleted" : ""));
            }
        }
        out.sort(null);
        return out;
    }
}
