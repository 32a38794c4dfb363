package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import org.apache.kafka.common.IsolationLevel;
import org.junit.jupiter.api.Test;

class LogTimesTest {

    @Test
    void theHighestVisibleTimestampBelowEveryStartMatchesAScanOfTheLog() {
        Random random = new Random(20261201);
        for (int round = 0; round < 300; round++) {
            FakeOffsetSource source = new FakeOffsetSource("t", 3);
            for (int p = 0; p < 3; p++) {
                FakeOffsetSource.Log log = source.log(p);
                int n = random.nextInt(30);
                long base = 1_700_000_000_000L + random.nextInt(1000);
                for (int i = 0; i < n; i++) {
                    long ts = base + random.nextInt(random.nextBoolean() ? 50 : 5000) - 1000; // often backwards
                    switch (random.nextInt(8)) {
                        case 0 -> log.marker(Instant.ofEpochMilli(base + 10_000 + random.nextInt(1000)));
                        case 1 -> log.abortedRecords(Instant.ofEpochMilli(ts + 20_000));
                        default -> log.append(Instant.ofEpochMilli(ts));
                    }
                    base += random.nextInt(20);
                }
                if (n > 4 && random.nextInt(4) == 0) {
                    log.deleteBelow(random.nextInt(n / 2));
                }
            }
            IsolationLevel level = random.nextBoolean() ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED;
            Map<Integer, Long> starts = new HashMap<>();
            for (int p = 0; p < 3; p++) {
                FakeOffsetSource.Log log = source.log(p);
                long end = log.end(level);
                starts.put(p, end == 0 ? 0 : log.logStart + random.nextInt((int) (end - log.logStart) + 1));
            }
            Map<Integer, Long> expected = new HashMap<>();
            starts.forEach((p, s) -> {
                FakeOffsetSource.Log log = source.log(p);
                log.records.headMap(s).forEach((o, t) -> {
                    if (o >= log.logStart && log.visible(o, level)) {
                        expected.merge(p, t.toEpochMilli(), Math::max);
                    }
                });
            });
            assertThat(LogTimes.before(source, "t", starts, level)).as("round %d, starts %s", round, starts)
                    .isEqualTo(expected);
        }
    }

    @Test
    void timestampsThatNeverGoBackwardsCostTwoLookups() {
        FakeOffsetSource source = new FakeOffsetSource("t", 1);
        for (int i = 0; i < 1000; i++) {
            source.log(0).append(Instant.ofEpochMilli(1_000_000 + i * 7L));
        }
        assertThat(LogTimes.before(source, "t", Map.of(0, 600L), IsolationLevel.READ_COMMITTED))
                .containsExactly(Map.entry(0, 1_000_000 + 599 * 7L));
        assertThat(source.calls.stream().filter(c -> c.equals("time") || c.equals("scan"))).hasSizeLessThanOrEqualTo(3);
    }

    /**
     * A transactional topic whose markers (the broker's clock) are later than its records: a probe above the records'
     * times meets a marker first and no visible record after it. Within the budget the answer is exact; past it the
     * lookup stops at a lower bound it found and says so.
     */
    @Test
    void markersLaterThanTheirRecordsCostAtMostTheBudgetAndAreSaidToBeABound() {
        FakeOffsetSource source = new FakeOffsetSource("t", 1);
        for (int i = 0; i < 50; i++) {
            source.log(0).append(Instant.ofEpochMilli(1000 + i)).marker(Instant.ofEpochMilli(9000 + i));
        }
        LogTimes.Result exact = LogTimes.lookUp(source, "t", Map.of(0, 100L), IsolationLevel.READ_COMMITTED, 1000);
        assertThat(exact.times()).containsExactly(Map.entry(0, 1049L));
        assertThat(exact.bounded()).isEmpty();
        LogTimes.Result bounded = LogTimes.lookUp(source, "t", Map.of(0, 100L), IsolationLevel.READ_COMMITTED, 5);
        assertThat(bounded.bounded()).containsExactly(0);
        assertThat(bounded.times().get(0)).isBetween(1000L, 1049L);
    }

    @Test
    void aStartAtTheLogStartHasNoRecordBelowIt() {
        FakeOffsetSource source = new FakeOffsetSource("t", 1);
        source.log(0).append(Instant.ofEpochMilli(5), Instant.ofEpochMilli(9)).deleteBelow(1);
        assertThat(LogTimes.before(source, "t", Map.of(0, 1L), IsolationLevel.READ_COMMITTED)).isEmpty();
    }
}
