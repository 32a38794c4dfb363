package dev.kbackfill.core.version;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.record.Reduction;
import org.junit.jupiter.api.Test;

/**
 * The version rule is an order and keeps each log's order: records of a few keys over several partitions of two
 * topics, timestamps often going backwards, split at random into runs (any partitions, any sub-range of offsets)
 * and batches, the runs applied in random orders through reduction and the newer-wins guard: one final state,
 * the newest record of each key by the rule, and never a record its own log superseded.
 */
class VersionOrderPropertyTest {

    /** One record of the model log: its coordinates, key and timestamp. */
    record Rec(String topic, int partition, long offset, long timestamp, int key) {
    }

    @Test
    void theIssuesThreeRecordsEndInTheLastRecordOfTheirLogWhateverTheOrderOfRuns() {
        // p0@0 t=300 "A", p0@1 t=100 "C", p1@0 t=200 "B": C supersedes A in its own log, and C's log time is 300
        Version a = new Version("t", 0, 0, 300, 300);
        Version c = new Version("t", 0, 1, 100, 300);
        Version b = new Version("t", 1, 0, 200, 200);
        assertThat(c.supersedes(a)).isTrue();
        assertThat(c.supersedes(b)).isTrue();
        assertThat(a.supersedes(b)).isTrue();
        for (List<Version> order : List.of(List.of(a, b, c), List.of(b, c, a), List.of(c, a, b), List.of(b, a, c),
                List.of(c, b, a), List.of(a, c, b))) {
            Version held = null;
            for (Version v : order) {
                if (v.supersedes(held)) {
                    held = v;
                }
            }
            assertThat(held).isEqualTo(c);
        }
    }

    @Test
    void theRuleIsAStrictTotalOrderOnRandomVersions() {
        Random random = new Random(7);
        List<Version> versions = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            long ts = random.nextInt(5);
            versions.add(new Version(random.nextBoolean() ? "a" : "b", random.nextInt(3), random.nextInt(4), ts,
                    ts + random.nextInt(3)));
        }
        for (Version x : versions) {
            assertThat(Version.compare(x, x)).isZero();
            assertThat(x.supersedes(x)).as("the same version is kept out").isFalse();
            for (Version y : versions) {
                assertThat(Integer.signum(Version.compare(x, y))).isEqualTo(-Integer.signum(Version.compare(y, x)));
                for (Version z : versions) {
                    if (Version.compare(x, y) < 0 && Version.compare(y, z) < 0) {
                        assertThat(Version.compare(x, z)).as("%s < %s < %s", x, y, z).isNegative();
                    }
                }
            }
        }
    }

    @Test
    void anySplitIntoRunsAndBatchesInAnyOrderEndsInOneStateTheNewestOfEachLog() {
        Random random = new Random(20261201);
        for (int round = 0; round < 400; round++) {
            Map<String, Map<Integer, List<Rec>>> logs = logs(random);
            Map<Integer, Version> expected = null;
            for (int trial = 0; trial < 6; trial++) {
                List<List<Rec>> runs = runs(random, logs);
                Collections.shuffle(runs, random);
                Map<Integer, Version> target = new HashMap<>();
                for (List<Rec> run : runs) {
                    apply(random, logs, run, target);
                }
                if (expected == null) {
                    expected = target;
                    // the winner of a key is never a record that a later record of its key in its own log supersedes
                    expected.forEach((key, v) -> logs.get(v.topic()).get(v.partition()).stream()
                            .filter(r -> r.key() == key && r.offset() > v.offset()).findAny()
                            .ifPresent(r -> {
                                throw new AssertionError("key " + key + " holds " + v + " though " + r + " follows it");
                            }));
                } else {
                    assertThat(target).as("round %d trial %d", round, trial).isEqualTo(expected);
                }
            }
        }
    }

    /** Two topics of 1-3 partitions, 0-12 records each, over 4 keys, timestamps jumping back often. */
    private static Map<String, Map<Integer, List<Rec>>> logs(Random random) {
        Map<String, Map<Integer, List<Rec>>> logs = new HashMap<>();
        for (String topic : List.of("orders", "corrections")) {
            Map<Integer, List<Rec>> partitions = new HashMap<>();
            int n = 1 + random.nextInt(3);
            for (int p = 0; p < n; p++) {
                List<Rec> log = new ArrayList<>();
                long ts = random.nextInt(50);
                int size = random.nextInt(13);
                for (long o = 0; o < size; o++) {
                    ts += random.nextInt(3) == 0 ? -random.nextInt(30) : random.nextInt(10);
                    log.add(new Rec(topic, p, o, ts, random.nextInt(4)));
                }
                partitions.put(p, log);
            }
            logs.put(topic, partitions);
        }
        return logs;
    }

    /** Runs that together cover every record at least once: random sub-ranges of random partitions, overlapping. */
    private static List<List<Rec>> runs(Random random, Map<String, Map<Integer, List<Rec>>> logs) {
        List<List<Rec>> runs = new ArrayList<>();
        logs.forEach((topic, partitions) -> partitions.forEach((p, log) -> {
            int at = 0;
            while (at < log.size()) {
                int to = Math.min(log.size(), at + 1 + random.nextInt(log.size()));
                runs.add(new ArrayList<>(log.subList(at, to)));
                // sometimes the next run starts before this one ends (a replay of an overlapping window)
                at = random.nextInt(3) == 0 ? Math.max(at + 1, to - random.nextInt(3)) : to;
            }
        }));
        // a few runs that replay a random window again
        for (int i = random.nextInt(3); i > 0; i--) {
            List<List<Rec>> all = new ArrayList<>(runs);
            if (!all.isEmpty()) {
                runs.add(all.get(random.nextInt(all.size())));
            }
        }
        return runs;
    }

    /**
     * One run: records stamped by a clock started at the log time below the run's first offset (the model of
     * {@code LogTimes.before}), reduced in batches of random size, each batch's changes applied by the guard.
     */
    private static void apply(Random random, Map<String, Map<Integer, List<Rec>>> logs, List<Rec> run,
                              Map<Integer, Version> target) {
        Rec first = run.get(0);
        Map<Integer, Long> before = new HashMap<>();
        logs.get(first.topic()).get(first.partition()).stream().filter(r -> r.offset() < first.offset())
                .mapToLong(Rec::timestamp).max().ifPresent(t -> before.put(first.partition(), t));
        LogClock clock = new LogClock(before);
        List<Change> changes = new ArrayList<>();
        for (Rec r : run) {
            changes.add(new Change(Map.of("id", r.key()), Map.of("v", r.offset()), r.partition(), r.offset(),
                    r.timestamp(), clock.stamp(r.partition(), r.timestamp())));
        }
        int at = 0;
        while (at < changes.size()) {
            int to = Math.min(changes.size(), at + 1 + random.nextInt(4));
            for (Change c : Reduction.lastPerKey(changes.subList(at, to))) {
                Version v = new Version(first.topic(), c.partition(), c.offset(), c.timestamp(), c.logTime());
                int key = (Integer) c.key().get("id");
                if (v.supersedes(target.get(key))) {
                    target.put(key, v);
                }
            }
            at = to;
        }
    }
}
