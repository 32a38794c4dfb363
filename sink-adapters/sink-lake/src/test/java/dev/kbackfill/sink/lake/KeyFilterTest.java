package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

class KeyFilterTest {

    /**
     * A random key of the given column kinds (a table's key columns each hold one kind): strings, longs, ints, bytes,
     * decimals; a value may be null.
     */
    private static List<Object> randomKey(Random random, int[] kinds) {
        List<Object> key = new ArrayList<>(kinds.length);
        for (int kind : kinds) {
            key.add(random.nextInt(50) == 0 ? null : switch (kind) {
                case 0 -> "order-" + random.nextInt(50_000_000);
                case 1 -> random.nextLong();
                case 2 -> random.nextInt();
                case 3 -> ByteBuffer.wrap(new byte[] {(byte) random.nextInt(), (byte) random.nextInt(), (byte) random.nextInt(),
                        (byte) random.nextInt()});
                default -> BigDecimal.valueOf(random.nextInt(), 2);
            });
        }
        return key;
    }

    @Test
    void everyKeyOfTheBatchPassesAsTheProbeBuildsItAndFewOthersDo() {
        Random random = new Random(11);
        for (int round = 0; round < 20; round++) {
            int columns = 1 + random.nextInt(3);
            int[] kinds = random.ints(columns, 0, 5).toArray();
            int size = round == 0 ? 0 : 1 + random.nextInt(round < 10 ? 50 : 200_000);
            Set<List<Object>> batch = new HashSet<>();
            while (batch.size() < size) {
                batch.add(randomKey(random, kinds));
            }
            KeyFilter filter = KeyFilter.of(batch);
            for (List<Object> k : batch) {
                // the probe's own shapes: a reused ArrayList, a singleton list, an immutable copy
                List<Object> asProbed = columns == 1 ? Collections.singletonList(k.get(0)) : new ArrayList<>(k);
                assertThat(filter.mayContain(asProbed)).as("key %s of a batch of %s", k, size).isTrue();
                assertThat(filter.wants(asProbed)).as("key %s of a batch of %s", k, size).isTrue();
            }
            if (size >= 10_000) {
                int passed = 0;
                int others = 0;
                for (int i = 0; i < 200_000; i++) {
                    List<Object> other = randomKey(random, kinds);
                    if (!batch.contains(other)) {
                        others++;
                        passed += filter.mayContain(other) ? 1 : 0;
                        assertThat(filter.wants(other)).as("key %s outside the batch", other).isFalse();
                    }
                }
                assertThat((double) passed / others).as("keys outside a batch of %s of kinds %s that pass", size,
                        java.util.Arrays.toString(kinds)).isLessThan(0.02);
            }
        }
    }

    @Test
    void aKeyEqualToABatchKeyPassesWhateverObjectsHoldIt() {
        KeyFilter filter = KeyFilter.of(Set.of(List.of("order-1", 5L), List.of(ByteBuffer.wrap(new byte[] {1, 2}))));
        assertThat(filter.mayContain(new ArrayList<>(List.of(new String("order-1"), Long.valueOf(5))))).isTrue();
        ByteBuffer inALargerArray = ByteBuffer.wrap(new byte[] {9, 1, 2, 9}, 1, 2).slice();
        assertThat(filter.mayContain(Collections.singletonList(inALargerArray))).isTrue();
    }

    @Test
    void itsSizeFollowsTheBatchAndIsBounded() {
        assertThat(KeyFilter.of(Set.of()).words()).isEqualTo(1);
        assertThat(KeyFilter.of(Set.of(List.of("a"), List.of("b"), List.of("c"), List.of("d"), List.of("e"))).words())
                .isEqualTo(2);
        Set<List<Object>> many = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            many.add(List.of(i));
        }
        // 25,000 words wanted: the next power of two, 256 KB
        assertThat(KeyFilter.of(many).words()).isEqualTo(32_768);
    }
}
