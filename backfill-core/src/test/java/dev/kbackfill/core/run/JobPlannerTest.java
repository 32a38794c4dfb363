package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import dev.kbackfill.core.sink.JobConflictException;
import dev.kbackfill.core.sink.JobIdentity;
import dev.kbackfill.core.sink.JobState;
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

    private JobState stored(BackfillRequest request, long next) {
        return new JobState("job", JobIdentity.fingerprint(request), 4, plan(request, "id-1"), Map.of(0, next));
    }

    @Test
    void nothingStoredStartsRunOneWithAFreshPlan() {
        JobDecision d = JobPlanner.decide("job", FIXED, Optional.empty(), "id-1", () -> plan(FIXED, "id-1"));
        assertThat(d).isInstanceOf(JobDecision.Start.class);
        assertThat(d.toRun().orElseThrow().run()).isEqualTo(1);
        assertThat(d.toRun().orElseThrow().nextOffsets()).containsEntry(0, 10L);
    }

    @Test
    void anIncompleteRunResumesItsStoredPlanWithoutResolvingAgain() {
        JobState s = stored(FIXED, 15);
        resolutions.set(0);
        JobDecision d = JobPlanner.decide("job", FIXED, Optional.of(s), "id-1", () -> plan(FIXED, "id-1"));
        assertThat(d).isEqualTo(new JobDecision.Resume(s));
        assertThat(resolutions).hasValue(0);
        assertThat(s.remaining()).isEqualTo(5);
    }

    @Test
    void aCompleteFixedRequestHasNothingToDo() {
        JobState s = stored(FIXED, 20);
        assertThat(JobPlanner.decide("job", FIXED, Optional.of(s), "id-1", () -> plan(FIXED, "id-1")))
                .isEqualTo(new JobDecision.AlreadyDone(s));
    }

    @Test
    void aCompleteMovingRequestStartsTheNextRunWithAFreshPlan() {
        JobState s = stored(MOVING, 20);
        JobDecision d = JobPlanner.decide("job", MOVING, Optional.of(s), "id-1", () -> plan(MOVING, "id-1"));
        assertThat(d).isInstanceOf(JobDecision.NextRun.class);
        assertThat(d.toRun().orElseThrow().run()).isEqualTo(5);
    }

    @Test
    void aDifferentRequestUnderTheSameNameIsAConflictNamingJobAndReset() {
        assertThatThrownBy(() -> JobPlanner.decide("job", MOVING, Optional.of(stored(FIXED, 15)), "id-1",
                () -> plan(MOVING, "id-1")))
                .isInstanceOf(JobConflictException.class)
                .hasMessage("job 'job' was created for --topic orders --from 2024-01-01 --to 2024-01-02, not --topic "
                        + "orders --from now-1d --to latest; choose another name with --job, or clear it with "
                        + "'kbackfill reset --job job --sink ... --yes'");
    }

    @Test
    void aRecreatedTopicCannotResumeAStoredPlan() {
        assertThatThrownBy(() -> JobPlanner.decide("job", FIXED, Optional.of(stored(FIXED, 15)), "id-2",
                () -> plan(FIXED, "id-2")))
                .isInstanceOf(JobConflictException.class).hasMessageContaining("deleted and recreated");
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
