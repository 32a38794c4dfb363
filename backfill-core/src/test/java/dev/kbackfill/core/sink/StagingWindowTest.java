package dev.kbackfill.core.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.RowShape;
import org.junit.jupiter.api.Test;

/** The one rule of a window of staged batches, as the run and the sink each use it. */
class StagingWindowTest {

    @Test
    void aSinkThatStagesNothingCommitsEveryBatch() {
        StagingWindow none = StagingWindow.none();
        assertThat(none.closesWith(10, false)).isTrue();
        assertThat(none.closesWith(0, false)).isTrue();
        assertThat(none.holdsStaged()).isFalse();
    }

    @Test
    void theBatchThatReachesTheStagingRowsOrAPauseClosesTheWindow() {
        StagingWindow w = new StagingWindow(100);
        assertThat(w.closesWith(40, false)).isFalse();
        assertThat(w.holdsStaged()).isTrue();
        assertThat(w.closesWith(59, false)).isFalse();
        assertThat(w.closesWith(1, false)).as("40 + 59 + 1 reach 100").isTrue();
        assertThat(w.holdsStaged()).isFalse();
        assertThat(w.closesWith(10, false)).isFalse();
        assertThat(w.closesWith(0, true)).as("a pause, a limit or the end closes what is staged").isTrue();
        assertThat(w.holdsStaged()).isFalse();
    }

    @Test
    void theSinkAddsUpItsBatchesAndTheCommittingOneReportsThemAll() {
        StagingWindow w = new StagingWindow(100);
        w.add(5, 1, 0, Map.of(0, 2L), Map.of());
        w.add(7, 0, 1, Map.of(0, 1L, 1, 3L), Map.of(1, 1L));
        w.unstaged(2);
        WriteResult r = w.result();
        assertThat(r.upserted()).isEqualTo(10);
        assertThat(r.deleted()).isEqualTo(1);
        assertThat(r.ignored()).isEqualTo(1);
        assertThat(r.keptOut()).isEqualTo(Map.of(0, 3L, 1, 3L));
        assertThat(r.superseded()).isEqualTo(Map.of(1, 1L));
        assertThat(r.staged()).isFalse();
    }

    @Test
    void aBatchStaysStagedOnlyWhereTheRunTheSinkAndTheTransactionAllow() {
        StagingWindow w = new StagingWindow(100);
        WriteBatch open = batch(false);
        assertThat(w.staysOpenAfter(open, true, 2, 0)).isTrue();
        assertThat(w.staysOpenAfter(batch(true), true, 2, 0)).as("the run closes the window").isFalse();
        assertThat(w.staysOpenAfter(open, false, 2, 0)).as("nothing staged to hold").isFalse();
        assertThat(w.staysOpenAfter(open, true, 2, 1)).as("a delete holds the writer lock").isFalse();
        w.savepoint();
        w.savepoint();
        assertThat(w.staysOpenAfter(open, true, 2, 0)).as("no room for another savepoint").isFalse();
        w.committedEarly();
        assertThat(w.holdsCommittedCounts()).isTrue();
        assertThat(w.staysOpenAfter(open, true, 2, 0)).as("an early commit frees the savepoints").isTrue();
        assertThat(StagingWindow.none().staysOpenAfter(open, true, 2, 0)).as("a sink that stages nothing").isFalse();
    }

    private static WriteBatch batch(boolean commits) {
        return new WriteBatch("j", 1, 1, List.of(), RowShape.of(List.of()), Map.of(0, 1L), "t", commits,
                dev.kbackfill.core.version.Version.ForeignRows.KEPT);
    }
}
