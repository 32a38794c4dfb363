package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobSpec;
import dev.kbackfill.core.sink.JobState;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.PartitionRange;
import dev.kbackfill.resolver.Plan;
import dev.kbackfill.resolver.TopicInfo;
import org.junit.jupiter.api.Test;

class JobPlannerTest {

    private static final BackfillRequest FIXED = BackfillRequest.builder("orders").from("2024-01-01").to("2024-01-02").build();
    private static final BackfillRequest MOVING = BackfillRequest.builder("orders").from("now-1d").to("latest").build();
    private final AtomicInteger resolutions = new AtomicInteger();

    private Plan plan(BackfillRequest request, String topicId) {
        resolutions.incrementAndGet();
        return new Plan(request, Instant.parse("2024-01-03T00:00:00Z"), Optional.empty(), Optional.empty(), "cluster",
                topicId, TopicInfo.TimestampType.CREATE_TIME,
                List.of(new PartitionRange(0, 10, 20, 0, 30, Optional.empty(), List.of())), List.of());
    }

    private static JobSpec spec(BackfillRequest request, String table) {
        return JobSpec.of(request, table, "string", "json", List.of(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                false);
    }

    private JobState stored(BackfillRequest request, long next) {
        JobSpec spec = spec(request, "a");
        return new JobState("job", spec.fingerprint(), 4, plan(request, "id-1"), Map.of(0, next), spec);
    }

    /** A state as stored before jobs had a spec: the request's fingerprint only. */
    private JobState storedBeforeSpecs(BackfillRequest request, long next) {
        return new JobState("job", JobIdentity.fingerprint(request), 4, plan(request, "id-1"), Map.of(0, next));
    }

    private static JobSpec onEngine(BackfillRequest request, String engine) {
        return JobSpec.of(request, "a", "string", "json", List.of(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                false, engine);
    }

    @Test
    void aContinueJobWhoseLaterBoundMovesOnIsTheSameJobAndIsNeverAdvisedAReset() {
        BackfillRequest night1 = BackfillRequest.builder("orders").from("continue:2024-01-01").to("2024-01-03").build();
        BackfillRequest night2 = BackfillRequest.builder("orders").from("continue:2024-01-01").to("2024-01-04").build();
        JobSpec first = spec(night1, "a");
        JobState done = new JobState("job", first.fingerprint(), 1, plan(night1, "id-1"), Map.of(0, 20L), first);
        JobDecision next = JobPlanner.decide("job", night2, spec(night2, "a"), Optional.of(done),
                () -> plan(night2, "id-1"));
        assertThat(next).isInstanceOf(JobDecision.NextRun.class);
        assertThat(next.toRun().orElseThrow().run()).isEqualTo(2);
        // another first bound is another job; and a continue: job is never advised a reset (it would start over)
        BackfillRequest other = BackfillRequest.builder("orders").from("continue:2023-01-01").to("2024-01-04").build();
        assertThatThrownBy(() -> JobPlanner.decide("job", other, spec(other, "a"), Optional.of(done),
                () -> plan(other, "id-1"))).isInstanceOf(JobConflictException.class)
                .hasMessageContaining("--from continue:2024-01-01").hasMessageNotContaining("reset")
                .hasMessageContaining("run it as it was created");
        assertThatThrownBy(() -> JobPlanner.decide("job", night2, spec(night2, "b"), Optional.of(done),
                () -> plan(night2, "id-1"))).as("another table: still a conflict").isInstanceOf(
                JobConflictException.class).hasMessageNotContaining("reset");
        // a fixed request's later bound still binds its job
        BackfillRequest fixedLater = BackfillRequest.builder("orders").from("2024-01-01").to("2024-01-03").build();
        JobState fixedDone = new JobState("job", spec(FIXED, "a").fingerprint(), 1, plan(FIXED, "id-1"),
                Map.of(0, 20L), spec(FIXED, "a"));
        assertThatThrownBy(() -> JobPlanner.decide("job", fixedLater, spec(fixedLater, "a"), Optional.of(fixedDone),
                () -> plan(fixedLater, "id-1"))).isInstanceOf(JobConflictException.class)
                .hasMessageContaining("clear it with 'kbackfill reset");
    }

    @Test
    void anUnfinishedRunMustFinishOnTheEngineItStartedOn() {
        JobSpec spark = onEngine(FIXED, "spark, 64 partitions per wave");
        JobState unfinished = new JobState("job", spark.fingerprint(), 1, plan(FIXED, "id-1"), Map.of(0, 15L), spark);
        assertThatThrownBy(() -> JobPlanner.decide("job", FIXED, onEngine(FIXED, "local"), Optional.of(unfinished),
                () -> plan(FIXED, "id-1"))).isInstanceOf(JobConflictException.class)
                .hasMessageContaining("in the middle of run 1 with engine spark, 64 partitions per wave, not local");
        // another wave split is another shape of progress too
        assertThatThrownBy(() -> JobPlanner.decide("job", FIXED, onEngine(FIXED, "spark, 8 partitions per wave"),
                Optional.of(unfinished), () -> plan(FIXED, "id-1"))).isInstanceOf(JobConflictException.class);
        assertThat(JobPlanner.decide("job", FIXED, spark, Optional.of(unfinished), () -> plan(FIXED, "id-1")))
                .isInstanceOf(JobDecision.Resume.class);
    }

    @Test
    void aFinishedJobsNextRunMayUseAnotherEngine() {
        JobSpec spark = onEngine(MOVING, "spark, 64 partitions per wave");
        JobState done = new JobState("job", spark.fingerprint(), 1, plan(MOVING, "id-1"), Map.of(0, 20L), spark);
        assertThat(JobPlanner.decide("job", MOVING, onEngine(MOVING, "local"), Optional.of(done),
                () -> plan(MOVING, "id-1"))).isInstanceOf(JobDecision.NextRun.class);
        // a spec stored before specs named an engine ran on one machine
        JobState old = stored(FIXED, 15);
        assertThat(JobPlanner.decide("job", FIXED, onEngine(FIXED, "local"), Optional.of(old), () -> plan(FIXED, "id-1")))
                .isInstanceOf(JobDecision.Resume.class);
    }

    @Test
    void nothingStoredStartsRunOneWithAFreshPlan() {
        JobDecision d = JobPlanner.decide("job", FIXED, spec(FIXED, "a"), Optional.empty(), () -> plan(FIXED, "id-1"));
        assertThat(d).isInstanceOf(JobDecision.Start.class);
        assertThat(d.toRun().orElseThrow().run()).isEqualTo(1);
        assertThat(d.toRun().orElseThrow().nextOffsets()).containsEntry(0, 10L);
    }

    @Test
    void anIncompleteRunResumesItsStoredPlanWithoutResolvingAgain() {
        JobState s = stored(FIXED, 15);
        resolutions.set(0);
        JobDecision d = JobPlanner.decide("job", FIXED, spec(FIXED, "a"), Optional.of(s), () -> plan(FIXED, "id-1"));
        assertThat(d).isEqualTo(new JobDecision.Resume(s));
        assertThat(resolutions).hasValue(0);
        assertThat(s.remaining()).isEqualTo(5);
    }

    @Test
    void aCompleteFixedRequestHasNothingToDo() {
        JobState s = stored(FIXED, 20);
        assertThat(JobPlanner.decide("job", FIXED, spec(FIXED, "a"), Optional.of(s), () -> plan(FIXED, "id-1")))
                .isEqualTo(new JobDecision.AlreadyDone(s));
    }

    @Test
    void aCompleteMovingRequestStartsTheNextRunWithAFreshPlan() {
        JobState s = stored(MOVING, 20);
        JobDecision d = JobPlanner.decide("job", MOVING, spec(MOVING, "a"), Optional.of(s), () -> plan(MOVING, "id-1"));
        assertThat(d).isInstanceOf(JobDecision.NextRun.class);
        assertThat(d.toRun().orElseThrow().run()).isEqualTo(5);
    }

    @Test
    void aDifferentRequestUnderTheSameNameIsAConflictNamingJobAndReset() {
        assertThatThrownBy(() -> JobPlanner.decide("job", MOVING, spec(MOVING, "a"), Optional.of(stored(FIXED, 15)),
                () -> plan(MOVING, "id-1")))
                .isInstanceOf(JobConflictException.class)
                .hasMessage("job 'job' was created with request --topic orders --from 2024-01-01 --to 2024-01-02, not "
                        + "--topic orders --from now-1d --to latest; choose another name with --job, or clear it with "
                        + "'kbackfill reset --job job --sink ... --yes'");
    }

    @Test
    void aFinishedJobNameReusedForAnotherTableIsAConflictNotNothingToDo() {
        JobState done = stored(FIXED, 20);
        assertThatThrownBy(() -> JobPlanner.decide("job", FIXED, spec(FIXED, "b"), Optional.of(done),
                () -> plan(FIXED, "id-1")))
                .isInstanceOf(JobConflictException.class)
                .hasMessageStartingWith("job 'job' was created with destination a, not b;");
    }

    @Test
    void everyPartThatShapesTheOutputIsPartOfTheJob() {
        JobState done = stored(FIXED, 20);
        JobSpec other = JobSpec.of(FIXED, "a", "json", "avro", List.of("id"), ConflictMode.OVERWRITE,
                TombstoneMode.SOFT_DELETE, true);
        assertThatThrownBy(() -> JobPlanner.decide("job", FIXED, other, Optional.of(done), () -> plan(FIXED, "id-1")))
                .isInstanceOf(JobConflictException.class)
                .hasMessageContaining("key-format string, not json")
                .hasMessageContaining("value-format json, not avro")
                .hasMessageContaining("key-fields (the record key), not id")
                .hasMessageContaining("on-conflict newer-wins, not overwrite")
                .hasMessageContaining("on-tombstone delete, not soft-delete")
                .hasMessageContaining("strict-time false, not true");
    }

    @Test
    void aJobStoredBeforeSpecsResumesUnderTheSameRequestAndConflictsUnderAnother() {
        JobState old = storedBeforeSpecs(FIXED, 15);
        assertThat(JobPlanner.decide("job", FIXED, spec(FIXED, "a"), Optional.of(old), () -> plan(FIXED, "id-1")))
                .isEqualTo(new JobDecision.Resume(old));
        assertThatThrownBy(() -> JobPlanner.decide("job", MOVING, spec(MOVING, "a"), Optional.of(old),
                () -> plan(MOVING, "id-1")))
                .isInstanceOf(JobConflictException.class).hasMessageContaining("request --topic orders --from 2024-01-01");
    }

    @Test
    void aNextRunIsBoundToTheSpecItRunsUnder() {
        JobDecision d = JobPlanner.decide("job", MOVING, spec(MOVING, "a"), Optional.of(stored(MOVING, 20)),
                () -> plan(MOVING, "id-1"));
        assertThat(d.toRun().orElseThrow().spec()).isEqualTo(spec(MOVING, "a"));
        assertThat(d.toRun().orElseThrow().fingerprint()).isEqualTo(spec(MOVING, "a").fingerprint());
    }

    @Test
    void theSameCommandLineIsTheSameJob() {
        BackfillRequest again = BackfillRequest.builder("orders").from("2024-01-01").to("2024-01-02").build();
        assertThat(JobIdentity.defaultName(again, "sqlite:a")).isEqualTo(JobIdentity.defaultName(FIXED, "sqlite:a"))
                .matches("orders-[0-9a-f]{8}");
        assertThat(JobIdentity.defaultName(FIXED, "sqlite:b")).isNotEqualTo(JobIdentity.defaultName(FIXED, "sqlite:a"));
        assertThat(JobIdentity.fingerprint(again)).isEqualTo(JobIdentity.fingerprint(FIXED));
        assertThat(JobIdentity.fingerprint(MOVING)).isNotEqualTo(JobIdentity.fingerprint(FIXED));
    }
}
