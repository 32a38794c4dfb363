package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lookup that finds nothing has the optional libraries added once and looks again; without them it fails as
 * before, and what adding throws is its failure. A checkpoint on an object store, whose filesystem none of this
 * module's test class path serves, stands for every such lookup.
 */
class OptionalLibrariesTest {

    @AfterEach
    void nothingLeftRegistered() {
        OptionalLibraries.addWith(null);
    }

    @Test
    void aLookupThatFindsNothingAddsTheLibrariesOnceThenSaysWhatItExpected() {
        AtomicInteger added = new AtomicInteger();
        OptionalLibraries.addWith(added::incrementAndGet);
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> CheckpointFiles.open("s3a://bucket/checkpoint", Map.of()))
                    .isInstanceOf(RequestException.class)
                    .hasMessageStartingWith("invalid checkpoint location 's3a://bucket/checkpoint': no filesystem");
        }
        assertThat(added).hasValue(1);
        assertThat(OptionalLibraries.add()).as("run once").isFalse();
    }

    @Test
    void whatAddingThrowsIsTheLookupsFailure() {
        OptionalLibraries.addWith(() -> {
            throw new IllegalStateException("the lake libraries are not on the class path");
        });
        assertThatThrownBy(() -> CheckpointFiles.open("s3a://bucket/checkpoint", Map.of()))
                .isInstanceOf(IllegalStateException.class).hasMessage("the lake libraries are not on the class path");
    }

    @Test
    void withNothingRegisteredNothingIsAdded() {
        assertThat(OptionalLibraries.add()).isFalse();
        assertThatThrownBy(() -> CheckpointFiles.open("hdfs://nn/checkpoint", Map.of()))
                .isInstanceOf(RequestException.class);
    }
}
