package dev.kbackfill.sink.delta;

import java.math.BigDecimal;

import io.delta.kernel.data.ArrayValue;
import io.delta.kernel.data.MapValue;
import io.delta.kernel.data.Row;
import io.delta.kernel.types.StructType;

/**
 * A commit action row whose {@code add.dataChange} reads false: compaction rewrites files without changing data,
 * and says so, so that streaming readers of the table do not read the rewritten rows again.
 */
final class NoDataChange implements Row {

    private final Row delegate;
    private final int overridden;
    private final int struct;

    private NoDataChange(Row delegate, int overridden, int struct, Row patchedStruct) {
        this.delegate = delegate;
        this.overridden = overridden;
        this.struct = struct;
        this.patchedStruct = patchedStruct;
    }

    /** The action with {@code dataChange=false} in its {@code add} (or {@code remove}) struct. */
    static Row of(Row action) {
        int add = action.getSchema().indexOf("add");
        if (add < 0 || action.isNullAt(add)) {
            return action;
        }
        Row inner = action.getStruct(add);
        NoDataChange patched = new NoDataChange(inner, inner.getSchema().indexOf("dataChange"), -1, null);
        return new NoDataChange(action, -1, add, patched);
    }

    private final Row patchedStruct;

    @Override
    public StructType getSchema() {
        return delegate.getSchema();
    }

    @Override
    public boolean isNullAt(int ordinal) {
        return delegate.isNullAt(ordinal);
    }

    @Override
    public boolean getBoolean(int ordinal) {
        return ordinal == overridden ? false : delegate.getBoolean(ordinal);
    }

    @Override
    public byte getByte(int ordinal) {
        return delegate.getByte(ordinal);
    }

    @Override
    public short getShort(int ordinal) {
        return delegate.getShort(ordinal);
    }

    @Override
    public int getInt(int ordinal) {
        return delegate.getInt(ordinal);
    }

    @Override
    public long getLong(int ordinal) {
        return delegate.getLong(ordinal);
    }

    @Override
    public float getFloat(int ordinal) {
        return delegate.getFloat(ordinal);
    }

    @Override
    public double getDouble(int ordinal) {
        return delegate.getDouble(ordinal);
    }

    @Override
    public String getString(int ordinal) {
        return delegate.getString(ordinal);
    }

    @Override
    public BigDecimal getDecimal(int ordinal) {
        return delegate.getDecimal(ordinal);
    }

    @Override
    public byte[] getBinary(int ordinal) {
        return delegate.getBinary(ordinal);
    }

    @Override
    public Row getStruct(int ordinal) {
        return ordinal == struct ? patchedStruct : delegate.getStruct(ordinal);
    }

    @Override
    public ArrayValue getArray(int ordinal) {
        return delegate.getArray(ordinal);
    }

    @Override
    public MapValue getMap(int ordinal) {
        return delegate.getMap(ordinal);
    }
}
