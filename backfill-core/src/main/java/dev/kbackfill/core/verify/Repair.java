package dev.kbackfill.core.verify;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.KeyIdentity;
import dev.kbackfill.core.record.RowShape;
import dev.kbackfill.core.run.RunListener;
import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.JobStore;
import dev.kbackfill.core.sink.Sink;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.SupersededInLogException;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.version.Version;
import dev.kbackfill.resolver.Plan;

/**
 * Fixes exactly what a verification finds: verifies the range ({@link Verification}), then writes the range's final
 * state for each key found wrong (a missing key inserted, a stale or different row replaced by the expected one, an
 * extra row deleted) in one batch, one transaction or commit of the sink, under {@code overwrite} for those keys
 * only, then looks those keys up again and judges them. A key whose held version is newer, or whose newer claim the
 * log cannot bear out ({@link Verdict#UNCONFIRMED}), is never written: a repair never makes a row older than the log
 * says. Beside a live writer the log after the range is read on to its end just before the commit, and a key with a
 * newer record there is left to the live writer.
 *
 * <p>The write is a run of a job of its own ({@code repairJob}), begun and completed in the sink's job store with the
 * rows, so its ledger (the deletes it records) and its history are the sink's usual ones. A repair killed before its
 * commit wrote nothing; one killed after it wrote everything: either way the same repair again verifies first, and
 * writes what is still wrong, or nothing.
 */
public final class Repair {

    /** What a fix does to its key's row. */
    public enum Action {
        /** The key has no row: the expected row is inserted. */
        INSERT,
        /** The row is stale or differs: it is replaced by the expected one. */
        REPLACE,
        /** The range ends in a delete and the row is live: it is deleted. */
        DELETE;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        static Action of(Verdict found) {
            return switch (found) {
                case MISSING -> INSERT;
                case EXTRA -> DELETE;
                case STALE, DIFFERENT -> REPLACE;
                default -> throw new IllegalArgumentException("not repaired: " + found);
            };
        }
    }

    /**
     * One key to fix.
     *
     * @param found  what verify found
     * @param action what the repair does
     * @param change the range's final change of the key (decoded): what is written
     */
    public record Fix(Verdict found, Action action, Change change) {
        public KeyIdentity key() {
            return KeyIdentity.of(change.key());
        }
    }

    /**
     * What a repair found and did.
     *
     * @param found       the verification before it
     * @param fixes       the keys it fixes (or, for a dry run, would fix)
     * @param unfixable   keys found wrong that a repair does not write (unconfirmed newer claims)
     * @param repairJob   the job the write ran as
     * @param run         its run number; 0 where nothing was written
     * @param written     rows the sink wrote or deleted
     * @param keptOut     keys the sink kept out
     * @param superseded  keys left out because the log holds a newer record of them now (a live writer's)
     * @param after       per class, the fixed keys judged again after the write (empty for a dry run)
     * @param stillWrong  samples of fixed keys still disagreeing after the write
     * @param dryRun      whether nothing was written by request
     */
    public record Outcome(VerifyReport found, List<Fix> fixes, long unfixable, String repairJob, int run, long written,
                          long keptOut, long superseded, Map<Verdict, Long> after, List<VerifyReport.Sample> stillWrong,
                          boolean dryRun) {

        /** Keys the repair leaves disagreeing: those it could not write, and fixed ones still wrong. */
        public long disagreeing() {
            return unfixable + after.entrySet().stream().filter(e -> e.getKey().disagrees())
                    .mapToLong(Map.Entry::getValue).sum();
        }

        /** Whether the target holds the range's final state now (for a dry run: already did). */
        public boolean agrees() {
            return dryRun ? found.agrees() : disagreeing() == 0;
        }

        /** Fixes of each action. */
        public long count(Action action) {
            return Repair.count(fixes, action);
        }
    }

    private final Verification verification;
    private final Verification.Options options;

    /** A repair that verifies as {@code verification} does (the job's decoding, modes, live writer and options). */
    public Repair(Verification verification, Verification.Options options) {
        this.verification = Objects.requireNonNull(verification, "verification");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Verifies {@code plan}'s ranges against {@code target} (open for verify), then, unless {@code dryRun}, writes the
     * fixes through a sink opened from {@code settings} as run N of {@code repairJob}, and judges the fixed keys
     * again.
     */
    public Outcome repair(Plan plan, Sink target, SinkSettings settings, String repairJob, boolean dryRun,
                          RunListener listener) {
        List<Fix> fixes = new ArrayList<>();
        long[] unfixable = new long[1];
        boolean beside = verification.besideLiveWriter(target);
        VerifyReport found = verification.reporting((v, c) -> {
            if (v == Verdict.UNCONFIRMED) {
                unfixable[0]++;
            } else {
                fixes.add(new Fix(v, Action.of(v), c));
            }
        }).verify(plan, target, listener);
        if (dryRun || fixes.isEmpty()) {
            return new Outcome(found, fixes, unfixable[0], repairJob, 0, 0, 0, 0, Map.of(), List.of(), dryRun);
        }
        listener.onNote("repairing " + fixes.size() + " key(s) as job " + repairJob + ": "
                + Action.INSERT.label() + " " + count(fixes, Action.INSERT) + ", "
                + Action.REPLACE.label() + " " + count(fixes, Action.REPLACE) + ", "
                + Action.DELETE.label() + " " + count(fixes, Action.DELETE));
        try (dev.kbackfill.core.live.NewestInLog log = beside ? verification.afterRange(plan, listener, false) : null) {
            Written w = write(plan, settings, repairJob, fixes, log, beside);
            Map<Verdict, Long> after = new EnumMap<>(Verdict.class);
            List<VerifyReport.Sample> stillWrong = new ArrayList<>();
            judgeAgain(plan, settings, w.written(), log, after, stillWrong);
            if (w.superseded() > 0) {
                after.merge(Verdict.NEWER, (long) w.superseded(), Long::sum);
            }
            return new Outcome(found, fixes, unfixable[0], repairJob, w.run(),
                    w.result().upserted() + w.result().deleted(), w.result().keptOutTotal(), w.superseded(), after,
                    stillWrong, false);
        }
    }

    private static long count(List<Fix> fixes, Action action) {
        return fixes.stream().filter(f -> f.action() == action).count();
    }

    private record Written(int run, WriteResult result, List<Change> written, int superseded) {
    }

    /** The fixes as one batch of a new run of the repair job, committed with its completed progress. */
    private Written write(Plan plan, SinkSettings settings, String repairJob, List<Fix> fixes,
                          dev.kbackfill.core.live.NewestInLog log, boolean beside) {
        Map<Integer, Long> ends = new TreeMap<>();
        plan.partitions().forEach(r -> ends.put(r.partition(), r.end()));
        List<Change> changes = fixes.stream().map(Fix::change).toList();
        int superseded = 0;
        if (log != null) {
            List<Change> later = supersededNow(log, changes);
            superseded += later.size();
            changes = without(changes, later);
        }
        try (Sink writer = SinkFactory.forSettings(settings.withConflict(ConflictMode.OVERWRITE))) {
            writer.open();
            JobStore store = writer.jobStore();
            try (AutoCloseable lock = store.lock(repairJob)) {
                int run = store.load(repairJob).map(s -> s.run() + 1).orElse(1);
                JobState state = JobState.begin(repairJob, "repair of " + plan.topic(), run, plan);
                store.begin(state);
                WriteBatch batch = new WriteBatch(repairJob, run, 1, changes, RowShape.of(changes), ends,
                        plan.topic(), true, beside ? Version.ForeignRows.NEWEST_IN_LOG : Version.ForeignRows.REPLACED,
                        log == null ? WriteBatch.Recheck.NONE : c -> supersededNow(log, c));
                while (true) {
                    try {
                        return new Written(run, writer.write(batch), batch.changes(), superseded);
                    } catch (SupersededInLogException e) {
                        // the live writer applied a newer record meanwhile: nothing committed; again without its keys
                        superseded += e.changes().size();
                        batch = batch.without(e.changes());
                    }
                }
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new dev.kbackfill.core.sink.SinkException("cannot release the lock of " + repairJob + ": " + e, e);
            }
        }
    }

    private static List<Change> supersededNow(dev.kbackfill.core.live.NewestInLog log, List<Change> changes) {
        log.catchUp();
        return changes.stream().filter(log::superseded).toList();
    }

    private static List<Change> without(List<Change> changes, List<Change> left) {
        java.util.Set<Change> out = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        out.addAll(left);
        return changes.stream().filter(c -> !out.contains(c)).toList();
    }

    /** Looks the written keys up in the target as it is now, and judges each as verify does. */
    private void judgeAgain(Plan plan, SinkSettings settings, List<Change> written,
                            dev.kbackfill.core.live.NewestInLog log, Map<Verdict, Long> after,
                            List<VerifyReport.Sample> stillWrong) {
        if (written.isEmpty()) {
            return;
        }
        try (Sink again = SinkFactory.forSettings(settings)) {
            again.openForVerify();
            try (TargetLookup lookup = again.verifier()) {
                int chunk = Math.max(1, lookup.keysPerLookup());
                for (int from = 0; from < written.size(); from += chunk) {
                    List<Change> part = written.subList(from, Math.min(written.size(), from + chunk));
                    Map<KeyIdentity, TargetRow> held = lookup.lookup(part, plan.topic(), Change::values);
                    for (Change c : part) {
                        TargetRow row = held.get(KeyIdentity.of(c.key()));
                        Verdict v = log != null && log.superseded(c) ? Verdict.NEWER
                                : Verdict.judge(c, Verification.version(c, plan.topic()), row);
                        after.merge(v, 1L, Long::sum);
                        if (v.disagrees() && stillWrong.size() < options.samples()) {
                            stillWrong.add(Verification.sample(c, v, row));
                        }
                    }
                }
            }
        }
    }

    /** The repair job of a job, or of a range: its name in the sink's job store. */
    public static String jobName(Optional<String> job, String derived) {
        return job.map(j -> j + "-repair").orElse("repair-" + derived);
    }
}
