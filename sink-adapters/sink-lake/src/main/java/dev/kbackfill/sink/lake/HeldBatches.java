package dev.kbackfill.sink.lake;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Reduction;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;

/**
 * Batches a lake sink holds back while the table it is to create does not exist yet and cannot be created from them:
 * no key column (every record left out), or no column that {@code --partition-by} partitions by (a first batch of
 * deletes, or of records without that field: its type is unknown until a record carries it). A table is created
 * from the key columns alone otherwise, and takes value columns as records bring them. A held batch is written with
 * the next batch the table can be created from, in one commit: the two reduced together by the version rule, as if
 * they had been one batch, with the later batch's progress. Nothing of a held batch is durable until then; a run that
 * ends while holding leaves the job unstarted in the sink ({@link #waiting} says so), and the next run reads those
 * records again.
 */
public final class HeldBatches {

    private WriteBatch held;

    /**
     * The columns a new table cannot be created without that {@code batch} lacks: its key columns when it has none,
     * else the columns {@code --partition-by} partitions by (a transform's source column, {@code ts} of
     * {@code day(ts)}) that are neither its columns nor metadata columns. Empty when the table can be created from it.
     */
    public static List<String> missingToCreate(WriteBatch batch, SinkSettings settings) {
        if (batch.shape().keyColumns().isEmpty()) {
            return List.of("the key");
        }
        List<String> missing = new ArrayList<>();
        for (String spec : settings.partitionBy()) {
            String source = sourceColumn(spec);
            boolean carried = settings.metadata().contains(source)
                    || batch.shape().keyColumns().stream().anyMatch(c -> c.name().equalsIgnoreCase(source))
                    || batch.shape().valueColumns().stream().anyMatch(c -> c.name().equalsIgnoreCase(source));
            if (!carried) {
                missing.add(source);
            }
        }
        return missing;
    }

    /**
     * A {@code --partition-by} column that the first batch's records do not carry, where they carry one a letter or
     * two away from it (a misspelt name): bad input, said before anything is written, as a misspelt {@code --columns}
     * name is. A column no record carries and nothing resembles may come with later records: the batch is held.
     */
    public static java.util.Optional<String> misspelt(WriteBatch batch, SinkSettings settings) {
        List<String> carried = new ArrayList<>();
        batch.shape().keyColumns().forEach(c -> carried.add(c.name()));
        batch.shape().valueColumns().forEach(c -> carried.add(c.name()));
        for (String source : missingToCreate(batch, settings)) {
            for (String c : carried) {
                int d = dev.kbackfill.resolver.EditDistance.atMost2(source.toLowerCase(java.util.Locale.ROOT),
                        c.toLowerCase(java.util.Locale.ROOT));
                int shorter = Math.min(source.length(), c.length());
                if (d == 1 && shorter >= 3 || d == 2 && shorter >= 6) {
                    return java.util.Optional.of("--partition-by partitions by column '" + source + "', which no "
                            + "record of the first batch carries; did you mean '" + c + "'? (nothing was written)");
                }
            }
        }
        return java.util.Optional.empty();
    }

    /** The column a partition spec partitions by: {@code status}, or the last argument of {@code bucket(16, id)}. */
    public static String sourceColumn(String spec) {
        String s = spec.strip();
        int open = s.indexOf('(');
        if (open < 0 || !s.endsWith(")")) {
            return s;
        }
        String[] args = s.substring(open + 1, s.length() - 1).split(",");
        return args[args.length - 1].strip();
    }

    /** Holds {@code batch} back: nothing is written; what the run counts for it is an upsert of nothing. */
    public WriteResult hold(WriteBatch batch) {
        held = held == null ? batch : merged(held, batch);
        return new WriteResult(0, 0, 0, Map.of());
    }

    /** Whether batches are held back (the table not created yet). */
    public boolean holding() {
        return held != null;
    }

    /**
     * What people should know of a run that ends while batches are held: the table was not created, nothing records
     * the job or its held changes, a rerun reads them again.
     */
    public java.util.Optional<String> waiting(String job, String table, SinkSettings settings) {
        if (held == null) {
            return java.util.Optional.empty();
        }
        List<String> missing = missingToCreate(held, settings);
        String why = missing.equals(List.of("the key"))
                ? "every record so far left out or none in the range"
                : "no record so far carries " + String.join(", ", missing) + ", which --partition-by partitions by";
        return java.util.Optional.of("job " + job + " wrote nothing to " + table + " (" + why + "), so the table was "
                + "not created and nothing records the job" + (held.changes().isEmpty() ? ""
                : " or its " + held.changes().size() + " change(s), deletes included") + ": a rerun reads its range "
                + "again");
    }

    /** How many changes are held back. */
    public int heldChanges() {
        return held == null ? 0 : held.changes().size();
    }

    /** {@code batch} with every held batch before it, reduced together; the holding ends. */
    public WriteBatch release(WriteBatch batch) {
        if (held == null) {
            return batch;
        }
        WriteBatch merged = merged(held, batch);
        held = null;
        return merged;
    }

    /** Forgets what is held (the job was reset). */
    public void clear() {
        held = null;
    }

    /** Two consecutive batches of one run as one: the last change per key by the version rule, the later progress. */
    static WriteBatch merged(WriteBatch earlier, WriteBatch later) {
        List<Change> all = new ArrayList<>(earlier.changes().size() + later.changes().size());
        all.addAll(earlier.changes());
        all.addAll(later.changes());
        List<Change> reduced = Reduction.lastPerKey(all);
        Map<Integer, Long> next = new LinkedHashMap<>(earlier.nextOffsets());
        next.putAll(later.nextOffsets());
        return new WriteBatch(later.job(), later.run(), later.sequence(), reduced, RowShape.of(reduced), next,
                later.topic());
    }
}
