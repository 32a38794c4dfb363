package dev.kbackfill.sink.lake;

import java.util.ArrayList;
import java.util.List;

import dev.kbackfill.core.record.Column;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.version.VersionField;

/**
 * The columns of a lake table kbackfill creates ({@code --create-table}), the same in every format: the key columns
 * (required), the value columns, then the metadata columns (topic, partition, offset, timestamp, log time, the version
 * field where the job has one, the deleted flag under soft deletes).
 */
public final class NewTableColumns {

    /** One column of the new table. */
    public record NewColumn(String name, LakeType type, boolean required, boolean key) {
    }

    private NewTableColumns() {
    }

    /** The columns for a batch of {@code shape} under {@code settings}. */
    public static List<NewColumn> of(RowShape shape, SinkSettings settings) {
        SinkSettings.MetadataColumns meta = settings.metadata();
        List<NewColumn> columns = new ArrayList<>();
        for (Column k : shape.keyColumns()) {
            columns.add(new NewColumn(k.name(), LakeType.forColumn(k.type()), true, true));
        }
        for (Column v : shape.valueColumns()) {
            columns.add(new NewColumn(v.name(), LakeType.forColumn(v.type()), false, false));
        }
        LakeType string = LakeType.of(LakeType.Kind.STRING);
        LakeType number = LakeType.of(LakeType.Kind.LONG);
        LakeType time = LakeType.of(LakeType.Kind.TIMESTAMP);
        columns.add(new NewColumn(meta.topic(), string, false, false));
        columns.add(new NewColumn(meta.partition(), number, false, false));
        columns.add(new NewColumn(meta.offset(), number, false, false));
        columns.add(new NewColumn(meta.timestamp(), time, false, false));
        columns.add(new NewColumn(meta.logTime(), time, false, false));
        if (settings.versionField().isPresent()) {
            columns.add(new NewColumn(meta.version(), versionIsText(settings) ? string : number, false, false));
        }
        if (settings.tombstoneMode() == TombstoneMode.SOFT_DELETE) {
            columns.add(new NewColumn(meta.deleted(), LakeType.of(LakeType.Kind.BOOLEAN), false, false));
        }
        return columns;
    }

    /** Whether the job's version field is text (a string field), else whole numbers. */
    public static boolean versionIsText(SinkSettings settings) {
        return settings.versionField().map(f -> f.type() == VersionField.Type.STRING).orElse(false);
    }
}
