package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a stop through the handle reaches: the runs' safe points, and what an engine registered while it ran. */
class RunHandleTest {

    @AfterEach
    void forget() {
        StopRequest.clear();
    }

    @Test
    void aStopOutsideARunSaysNothingWaitsAndInsideOneAsksTheRunAndPassesItToTheEngine() {
        RunHandle runs = new RunHandle();
        AtomicInteger destroyed = new AtomicInteger();
        assertThat(runs.stop("SIGTERM")).as("nothing runs yet").isFalse();
        StopRequest.clear();
        boolean[] seen = new boolean[2];
        runs.during(() -> {
            try (RunHandle.Registration r = runs.onStop(destroyed::incrementAndGet)) {
                seen[0] = runs.running();
                seen[1] = runs.stop("SIGINT");
            }
            return null;
        });
        assertThat(seen).containsExactly(true, true);
        assertThat(StopRequest.reason()).isEqualTo("SIGINT");
        assertThat(destroyed).hasValue(1);
        assertThat(runs.running()).isFalse();
        assertThat(runs.stop("SIGINT")).isFalse();
        assertThat(destroyed).as("the engine's registration ended with its run").hasValue(1);
    }
}
