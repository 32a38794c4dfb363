package dev.kbackfill.sink.lake;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiFunction;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.version.Held;
import dev.kbackfill.core.version.Version;

/**
 * Decides a batch's keys against the rows a lake table holds, the same for every lake format: under newer-wins a
 * change is taken when it is newer, by the one version rule, than both the key's stored row and its tombstone
 * ledger entry; under insert-only only keys the table has no row for (a soft-deleted row is a row), never
 * tombstones; under overwrite everything. A delete taken is recorded in the ledger (hard deletes under newer-wins),
 * kept in the row (soft deletes), or dropped (ignore). The table format does the rest through {@link Effects}.
 *
 * @param <W> where a stored row lives (a file and a position in it)
 */
public final class KeyedBatch<W> {

    /** A row the table holds for an incoming key: its physical values and where it lives. */
    public record Stored<W>(Object[] row, W where) {
    }

    /** What the table format does with the decided keys. */
    public interface Effects<W> {
        /** The stored row is taken out: replaced by the key's new row, or hard-deleted. */
        void takeOut(W where);

        /** The stored row stays, marked deleted by the tombstone {@code c} (its values read back as they are). */
        void softDelete(W where, Change c);
    }

    private final SinkSettings settings;
    private final MetadataOrdinals ordinals;
    private final TombstoneLedger ledger;
    private final LakeRows rows;
    private final BiFunction<Change, ValueMismatch, RuntimeException> refused;

    /**
     * @param rows    how the table's rows are built from changes
     * @param refused the exception for a change whose values the table cannot hold (a poison record)
     */
    public KeyedBatch(SinkSettings settings, MetadataOrdinals ordinals, TombstoneLedger ledger, LakeRows rows,
                      BiFunction<Change, ValueMismatch, RuntimeException> refused) {
        this.settings = settings;
        this.ordinals = ordinals;
        this.ledger = ledger;
        this.rows = rows;
        this.refused = refused;
        requireWritten(rows.columnsNotWritten(c -> settings.metadata().contains(c) || settings.writesValueColumn(c)));
    }

    /**
     * Refuses a table with value columns the job does not write ({@code --columns} leaves them out): a lake table's
     * row is replaced whole, so they would lose their values.
     *
     * @param left the table's columns that are neither key, metadata nor written
     */
    public static void requireWritten(List<String> left) {
        if (!left.isEmpty()) {
            throw new dev.kbackfill.core.sink.SinkConfigException("the table has column(s) " + String.join(", ", left)
                    + " that --columns leaves out, and a lake table's row is written whole, so they would be NULL in "
                    + "every row written; name them in --columns, or leave --columns out; nothing was written");
        }
    }

    /**
     * The batch's changes by their key as the table holds it. Two identities the table holds as one row ("1" and 1 in
     * a string column) leave it the newer by the rule, whatever their order in the batch; the other is counted in
     * {@code collided} (by partition) as kept out.
     */
    public Map<List<Object>, Change> byKey(WriteBatch batch, Map<Integer, Long> collided) {
        Map<List<Object>, Change> incoming = new LinkedHashMap<>(
                dev.kbackfill.core.record.Reduction.capacityFor(batch.changes().size()));
        for (Change c : batch.changes()) {
            try {
                rows.checkKeyTypes(c, settings.typedKeys());
                incoming.merge(rows.key(c), c, (held, now) -> {
                    Change newer = batch.version(now).supersedes(batch.version(held)) ? now : held;
                    collided.merge((newer == now ? held : now).partition(), 1L, Long::sum);
                    return newer;
                });
            } catch (ValueMismatch e) {
                throw refused.apply(c, e);
            }
        }
        return incoming;
    }

    /**
     * Decides every incoming change (one per key, keyed by its physical key values, from {@link #byKey}) against the
     * rows found for its key, hands rows taken out or soft-deleted to {@code effects}, adds the rows the batch writes
     * (stamped) to {@code newRows}, and counts it all; {@code collided} holds the changes already kept out because two
     * identities met in one row (by partition).
     */
    public WriteResult decide(WriteBatch batch, Map<List<Object>, Change> incoming, Map<List<Object>, Stored<W>> found,
                              Map<Integer, Long> collided, Effects<W> effects, List<Object[]> newRows) {
        // the table as read here is what the commit must still be based on (a writer committing since makes it
        // stale, and it is decided again): what a live writer applied before is in the log now
        batch.recheckBeforeCommit();
        boolean ledgered = settings.conflictMode() == ConflictMode.NEWER_WINS
                && settings.tombstoneMode() == TombstoneMode.DELETE;
        // a delete recorded by any earlier job is a version, whatever this job does with tombstones
        boolean consultLedger = settings.conflictMode() == ConflictMode.NEWER_WINS && ledger.holdsAny();
        long upserted = 0;
        long deleted = 0;
        long ignored = 0;
        Map<Integer, Long> keptOut = new TreeMap<>(collided);
        for (Map.Entry<List<Object>, Change> e : incoming.entrySet()) {
            Change c = e.getValue();
            Stored<W> at = found.get(e.getKey());
            Object[] stored = at == null ? null : at.row();
            // the key's ledger text, only where the ledger is read or written for it
            TombstoneLedger.Key ledgerKey = consultLedger || (ledgered && c.isTombstone()) ? rows.ledgerKey(e.getKey()) : null;
            Version deletedAt = consultLedger ? ledger.deleted(ledgerKey) : null;
            switch (verdict(c, batch, stored, deletedAt)) {
                case KEPT_OUT -> {
                    keptOut.merge(c.partition(), 1L, Long::sum);
                    continue;
                }
                case IGNORED -> {
                    ignored++;
                    continue;
                }
                case TAKEN -> {
                }
            }
            if (c.isTombstone()) {
                if (settings.tombstoneMode() == TombstoneMode.IGNORE) {
                    ignored++;
                    continue;
                }
                deleted++;
                if (ledgered) {
                    ledger.record(ledgerKey, batch.version(c));
                }
                if (settings.tombstoneMode() == TombstoneMode.DELETE) {
                    if (stored != null) {
                        effects.takeOut(at.where());
                    }
                    continue; // with no row, nothing to delete: the ledger holds its version
                }
                if (stored != null) {
                    effects.softDelete(at.where(), c);
                } else {
                    newRows.add(newRow(c, true, batch));
                }
            } else {
                upserted++;
                newRows.add(newRow(c, false, batch));
                if (stored != null) {
                    effects.takeOut(at.where());
                }
            }
        }
        return new WriteResult(upserted, deleted, ignored, keptOut);
    }

    /** The row a change adds: its values, or (a soft delete of a key with no row) its key only, marked deleted. */
    private Object[] newRow(Change c, boolean deleted, WriteBatch batch) {
        try {
            return rows.newRow(c, deleted, ordinals, batch.topic());
        } catch (ValueMismatch e) {
            throw refused.apply(c, e);
        }
    }

    private enum Verdict { TAKEN, KEPT_OUT, IGNORED }

    private Verdict verdict(Change c, WriteBatch batch, Object[] stored, Version deletedAt) {
        switch (settings.conflictMode()) {
            case OVERWRITE:
                return Verdict.TAKEN;
            case INSERT_ONLY:
                if (c.isTombstone()) {
                    return Verdict.IGNORED;
                }
                return stored == null ? Verdict.TAKEN : Verdict.KEPT_OUT;
            default:
                // the row, and the key's delete in the ledger, each by the one rule (a row of another writer as the
                // batch says, by its own column of the version field first)
                Version incoming = batch.version(c);
                return incoming.replaces(held(stored), batch.foreignRows())
                        && incoming.replaces(Held.of(deletedAt), batch.foreignRows()) ? Verdict.TAKEN : Verdict.KEPT_OUT;
        }
    }

    /** What a stored row is to the version rule: nothing, a version kbackfill wrote, or another writer's row. */
    private Held held(Object[] stored) {
        if (stored == null) {
            return Held.NOTHING;
        }
        Version v = ordinals.version(stored);
        return v != null ? new Held.Known(v)
                : new Held.Foreign(rows.ownVersionField(stored, settings.versionField(), settings.mapping()));
    }
}
