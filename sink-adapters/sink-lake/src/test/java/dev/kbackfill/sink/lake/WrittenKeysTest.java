package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

class WrittenKeysTest {

    @Test
    void everyWrittenKeyMayBeThereAndAlmostNoOtherKeyIs() {
        WrittenKeys keys = new WrittenKeys(1_000_001);
        Random random = new Random(7);
        for (int i = 0; i < 1_000_000; i++) {
            keys.add(List.of("order-" + i, (long) (i % 13)));
        }
        for (int i = 0; i < 1_000_000; i++) {
            assertThat(keys.mayContain(List.of("order-" + i, (long) (i % 13)))).isTrue();
        }
        int falsePositives = 0;
        for (int i = 0; i < 1_000_000; i++) {
            if (keys.mayContain(List.of("order-" + (1_000_000 + random.nextInt(Integer.MAX_VALUE - 1_000_000)), 3L))) {
                falsePositives++;
            }
        }
        assertThat(falsePositives).as("false positives in a million keys never written").isLessThanOrEqualTo(5);
    }

    @Test
    void aFullFilterAnswersMaybeForEveryKey() {
        WrittenKeys keys = new WrittenKeys(2);
        keys.add(List.of("a"));
        assertThat(keys.mayContain(List.of("zzz"))).isFalse();
        keys.add(List.of("b"));
        assertThat(keys.full()).isTrue();
        assertThat(keys.mayContain(List.of("zzz"))).isTrue();
    }
}
