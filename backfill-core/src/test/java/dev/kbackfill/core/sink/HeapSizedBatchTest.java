package dev.kbackfill.core.sink;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeapSizedBatchTest {

    private static final long MB = 1024L * 1024;

    @Test
    void aBatchTakesAnEighthOfTheHeapAtOneKilobytePerKey() {
        assertThat(Sink.heapSizedBatchRows(256 * MB)).isEqualTo(32_768);
        assertThat(Sink.heapSizedBatchRows(1024 * MB)).isEqualTo(131_072);
    }

    @Test
    void aSmallHeapStillGetsTheOldDefaultAndALargeOneACap() {
        assertThat(Sink.heapSizedBatchRows(64 * MB)).isEqualTo(20_000);
        assertThat(Sink.heapSizedBatchRows(6 * 1024 * MB)).isEqualTo(500_000);
    }
}
