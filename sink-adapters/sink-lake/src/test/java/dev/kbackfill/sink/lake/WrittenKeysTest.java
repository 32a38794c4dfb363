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
    void atThreeQuartersFullAKeyNeverWrittenStillAlmostNeverPasses() {
        WrittenKeys keys = new WrittenKeys(786_432); // 2^20 slots, filled to three quarters: the longest searches
        for (int i = 0; i < 786_431; i++) {
            keys.add(List.of((long) i * 7919));
        }
        assertThat(keys.full()).isFalse();
        for (int i = 0; i < 786_431; i++) {
            assertThat(keys.mayContain(List.of((long) i * 7919))).isTrue();
        }
        int falsePositives = 0;
        for (int i = 0; i < 1_000_000; i++) {
            if (keys.mayContain(List.of((long) i * 7919 + 1))) {
                falsePositives++;
            }
        }
        assertThat(falsePositives).as("false positives in a million keys never written").isLessThanOrEqualTo(2);
    }

    @Test
    void aSetForAHeapTakesASixteenthOfItAtMost64Mb() {
        WrittenKeys small = WrittenKeys.forHeap(64L << 20); // 4 MB: 2^20 slots, three quarters of them
        for (int i = 0; i < 786_431; i++) {
            small.add(List.of("k" + i));
        }
        assertThat(small.full()).isFalse();
        small.add(List.of("last"));
        assertThat(small.full()).isTrue();
    }

    @Test
    void aKeyAddedTwiceCountsOnce() {
        WrittenKeys keys = new WrittenKeys(2);
        keys.add(List.of("a", 1L));
        keys.add(List.of("a", 1L));
        assertThat(keys.full()).isFalse();
        assertThat(keys.mayContain(List.of("a", 2L))).isFalse();
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

    @Test
    void keysAddedAndAskedForByTheBatchInTheTablesOrderAnswerAsOneByOneInTheirOwn() {
        for (int seed = 0; seed < 60; seed++) {
            Random random = new Random(seed);
            long capacity = 1 + random.nextInt(seed % 3 == 0 ? 50 : 20_000); // some fill up part-way through a batch
            WrittenKeys batched = new WrittenKeys(capacity);
            WrittenKeys single = new WrittenKeys(capacity);
            int universe = 1 + random.nextInt(40_000);
            for (int batch = 0; batch < 1 + random.nextInt(8); batch++) {
                List<List<Object>> keys = new java.util.ArrayList<>();
                for (int n = random.nextInt(6_000); n > 0; n--) {
                    keys.add(random.nextBoolean() ? List.of("k" + random.nextInt(universe))
                            : List.of("k" + random.nextInt(universe), (long) random.nextInt(3)));
                }
                long[] hashes = keys.stream().mapToLong(WrittenKeys::hash).toArray();
                boolean[] may = batched.mayContainAll(hashes);
                for (int i = 0; i < keys.size(); i++) {
                    assertThat(may[i]).as("seed %d batch %d key %s", seed, batch, keys.get(i))
                            .isEqualTo(single.mayContain(keys.get(i)));
                }
                batched.addAll(hashes);
                keys.forEach(single::add);
                assertThat(batched.full()).isEqualTo(single.full());
                for (List<Object> k : keys) {
                    assertThat(batched.mayContain(k)).as("seed %d: a key added is never missed", seed).isTrue();
                }
            }
        }
    }
}
