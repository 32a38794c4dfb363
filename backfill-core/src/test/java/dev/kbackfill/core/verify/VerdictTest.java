package dev.kbackfill.core.verify;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.Change;
import dev.kbackfill.core.version.Version;
import org.junit.jupiter.api.Test;

/** Every class a key can fall in, from what the range ends in and what the target holds. */
class VerdictTest {

    private static final Change VALUE = new Change(Map.of("id", 1L), Map.of("a", 1L), 0, 10, 1_000);
    private static final Change DELETE = new Change(Map.of("id", 1L), null, 0, 10, 1_000);
    private static final Version AT = new Version("t", 0, 10, 1_000);
    private static final Version OLDER = new Version("t", 0, 5, 900);
    private static final Version NEWER = new Version("t", 0, 20, 1_100);

    @Test
    void aValueIsMatchingAtItsVersionWithItsValuesAndDifferentWithOthers() {
        assertThat(Verdict.judge(VALUE, AT, TargetRow.live(AT, Map.of("a", 1L), List.of()))).isEqualTo(Verdict.MATCHING);
        assertThat(Verdict.judge(VALUE, AT, TargetRow.live(AT, Map.of("a", 2L), List.of("a")))).isEqualTo(Verdict.DIFFERENT);
    }

    /** A key held by two rows (a lake table written by another hand) is never the range's final state. */
    @Test
    void aKeyHeldTwiceIsDifferentWhateverEachRowHolds() {
        TargetRow right = TargetRow.live(AT, Map.of("a", 1L), List.of());
        TargetRow twice = TargetRow.merge(right, TargetRow.live(AT, Map.of("a", 1L), List.of()));
        assertThat(twice.duplicated()).isTrue();
        assertThat(Verdict.judge(VALUE, AT, twice)).isEqualTo(Verdict.DIFFERENT);
        assertThat(Verdict.judge(VALUE, AT, TargetRow.merge(right, TargetRow.live(NEWER, Map.of(), List.of()))))
                .isEqualTo(Verdict.DIFFERENT);
    }

    /** The version rule orders by log time, not a record's own timestamp: a row holding another timestamp differs. */
    @Test
    void aRowWhoseTimestampIsNotTheRecordsIsDifferent() {
        Version otherTimestamp = new Version("t", 0, 10, 999, 1_000, null); // same log time, same place in the log
        assertThat(Version.compare(otherTimestamp, AT)).isZero();
        assertThat(Verdict.judge(VALUE, AT, TargetRow.live(otherTimestamp, AT, Map.of("a", 1L), List.of())))
                .isEqualTo(Verdict.DIFFERENT);
    }

    @Test
    void anOlderVersionIsStaleAndANewerOneNewerWhateverTheValues() {
        assertThat(Verdict.judge(VALUE, AT, TargetRow.live(OLDER, Map.of(), List.of()))).isEqualTo(Verdict.STALE);
        assertThat(Verdict.judge(VALUE, AT, TargetRow.live(NEWER, Map.of(), List.of("a")))).isEqualTo(Verdict.NEWER);
    }

    @Test
    void aValueWithoutARowIsMissingUnlessANewerDeleteWasRecorded() {
        assertThat(Verdict.judge(VALUE, AT, null)).isEqualTo(Verdict.MISSING);
        assertThat(Verdict.judge(VALUE, AT, TargetRow.deleted(OLDER))).isEqualTo(Verdict.MISSING);
        assertThat(Verdict.judge(VALUE, AT, TargetRow.deleted(NEWER))).isEqualTo(Verdict.NEWER);
    }

    @Test
    void aDeleteMatchesNoLiveRowAndALiveRowIsExtraUnlessNewer() {
        assertThat(Verdict.judge(DELETE, AT, null)).isEqualTo(Verdict.MATCHING);
        assertThat(Verdict.judge(DELETE, AT, TargetRow.deleted(OLDER))).isEqualTo(Verdict.MATCHING);
        assertThat(Verdict.judge(DELETE, AT, TargetRow.live(OLDER, Map.of(), List.of()))).isEqualTo(Verdict.EXTRA);
        assertThat(Verdict.judge(DELETE, AT, TargetRow.live(null, Map.of(), List.of()))).isEqualTo(Verdict.EXTRA);
        assertThat(Verdict.judge(DELETE, AT, TargetRow.live(NEWER, Map.of(), List.of()))).isEqualTo(Verdict.NEWER);
    }

    @Test
    void aRowWithoutVersionIsJudgedByItsValues() {
        assertThat(Verdict.judge(VALUE, AT, TargetRow.live(null, Map.of("a", 1L), List.of()))).isEqualTo(Verdict.MATCHING);
        assertThat(Verdict.judge(VALUE, AT, TargetRow.live(null, Map.of("a", 3L), List.of("a")))).isEqualTo(Verdict.DIFFERENT);
    }

    @Test
    void onlyMissingExtraStaleUnconfirmedAndDifferentDisagree() {
        assertThat(List.of(Verdict.values()).stream().filter(Verdict::disagrees))
                .containsExactly(Verdict.MISSING, Verdict.EXTRA, Verdict.STALE, Verdict.UNCONFIRMED, Verdict.DIFFERENT);
    }

    @Test
    void aLiveRowAndALedgerEntryTogetherAreTheLiveRow() {
        TargetRow merged = TargetRow.merge(TargetRow.deleted(OLDER), TargetRow.live(AT, Map.of(), List.of()));
        assertThat(merged.live()).isTrue();
        assertThat(merged.version()).isEqualTo(AT);
        assertThat(TargetRow.merge(TargetRow.deleted(OLDER), TargetRow.deleted(NEWER)).deletedAt()).isEqualTo(NEWER);
    }
}
