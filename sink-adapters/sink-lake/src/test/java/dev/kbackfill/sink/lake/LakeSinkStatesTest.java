package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.core.sink.WriteBatch;
import dev.kbackfill.core.sink.WriteResult;
import dev.kbackfill.core.verify.TargetLookup;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.TopicInfo;
import org.junit.jupiter.api.Test;

/**
 * Where a begun job state lives before a table can hold it: held by the sink while the table does not exist, or
 * while this process cannot commit to it (a Delta table only an engine's writer commits to), and the table's own
 * state of that run as soon as the table holds it (by its first commit, or by the engine).
 */
class LakeSinkStatesTest {

    /** An in-memory table: its states, whether it exists and whether this process may commit states to it. */
    static final class MemoryTable implements LakeSink.Table {
        final Map<String, JobState> states = new HashMap<>();
        boolean exists;
        boolean commitsHere = true;
        int stateCommits;

        @Override public String target() { return "memory:t"; }
        @Override public String shown() { return "the table t"; }
        @Override public String destination() { return "the table"; }
        @Override public int defaultBatchRows() { return 10; }
        @Override public void connect() { }
        @Override public boolean exists() { return exists; }
        @Override public List<String> check() { return List.of(); }
        @Override public void checkCreation() { }
        @Override public Optional<JobState> stored(String job) { return Optional.ofNullable(states.get(job)); }
        @Override public List<String> jobs() { return List.copyOf(states.keySet()); }
        @Override public boolean commitsStatesHere() { return commitsHere; }

        @Override
        public void commitStates(Map<String, JobState> changed) {
            if (!commitsHere) {
                throw new IllegalStateException("no commits to this table from this process");
            }
            stateCommits++;
            changed.forEach((job, state) -> {
                if (state == null) {
                    states.remove(job);
                } else {
                    states.put(job, state);
                }
            });
        }

        @Override public long forgetDeletesBefore(long millis) { return 0; }
        @Override public AutoCloseable lock(String job) { return () -> { }; }

        @Override
        public WriteResult write(WriteBatch batch, JobState after) {
            exists = true;
            states.put(batch.job(), after);
            return new WriteResult(0, 0, 0, Map.of());
        }

        @Override public void refresh() { }
        @Override public TargetLookup verifier() { throw new UnsupportedOperationException(); }
        @Override public List<String> warnings() { return List.of(); }
        @Override public void close() { }
    }

    static Plan plan() {
        return new Plan(BackfillRequest.builder("orders").from("earliest").to("latest").build(),
                Instant.parse("2024-01-03T00:00:00Z"), Optional.empty(), Optional.empty(), "cluster", "topic-id",
                TopicInfo.TimestampType.CREATE_TIME, List.of(new PartitionRange(0, 0, 100, 0, 100, Optional.empty(),
                List.of())), List.of());
    }

    static LakeSink sink(MemoryTable table) {
        return new LakeSink(new SinkSettings("memory:t", "t", Optional.empty(), Optional.empty(),
                ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false, SinkSettings.MetadataColumns.DEFAULT,
                Map.of(), SinkSettings.Source.NONE), table);
    }

    @Test
    void aStateTheProcessCannotCommitIsHeldUntilTheEngineStoresItsRun() {
        MemoryTable table = new MemoryTable();
        table.exists = true;
        table.commitsHere = false;
        JobState first = JobState.begin("j", "f", 1, plan());
        table.states.put("j", first.advancedTo(Map.of(0, 100L))); // run 1, done
        LakeSink sink = sink(table);
        assertThat(sink.jobStore().storesStatesHere()).isFalse();
        JobState next = JobState.begin("j", "f", 2, plan());
        sink.jobStore().begin(next);
        assertThat(table.stateCommits).isZero();
        assertThat(sink.jobStore().load("j")).contains(next); // the run this process began, newer than the table's
        // the engine stores run 2 and moves it on: the table's state wins over the held one
        JobState moved = next.advancedTo(Map.of(0, 40L));
        table.states.put("j", moved);
        assertThat(sink.jobStore().load("j")).contains(moved);
    }

    @Test
    void aStateBegunBeforeTheTableExistsGivesWayToTheTablesOnceItHoldsTheRun() {
        MemoryTable table = new MemoryTable();
        LakeSink sink = sink(table);
        assertThat(sink.jobStore().storesStatesHere()).isFalse();
        JobState begun = JobState.begin("j", "f", 1, plan());
        sink.jobStore().begin(begun);
        assertThat(sink.jobStore().load("j")).contains(begun);
        // another process (an engine's driver) creates the table and commits progress past the first wave
        table.exists = true;
        JobState moved = begun.advancedTo(Map.of(0, 60L));
        table.states.put("j", moved);
        assertThat(sink.jobStore().load("j")).contains(moved);
        assertThat(sink.jobStore().storesStatesHere()).isTrue();
    }
}
