package dev.kbackfill.core.live;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The set of key hashes answers exactly as a set in memory would, whether its entries stay in memory, go to disk in
 * many runs, are merged into one, or arrive after the merge; and leaves nothing on disk when closed.
 */
class KeyHashesTest {

    @TempDir
    Path dir;

    @Test
    void answersAsASetInMemoryWhateverWentToDisk() {
        Random random = new Random(52);
        for (long budget : new long[] {1 << 20, 1024 * KeyHashes.BYTES_PER_MEMORY_ENTRY}) {
            Set<List<Long>> model = new HashSet<>();
            try (KeyHashes keys = new KeyHashes(budget, dir)) {
                for (int i = 0; i < 20_000; i++) {
                    // few distinct high halves and signs on both: the unsigned order is exercised, and repeats
                    long hi = random.nextInt(50) - 25L;
                    long lo = random.nextLong();
                    if (random.nextInt(10) == 0 && !model.isEmpty()) {
                        List<Long> again = model.iterator().next();
                        hi = again.get(0);
                        lo = again.get(1);
                    }
                    keys.add(hi, lo);
                    model.add(List.of(hi, lo));
                    if (i == 15_000) {
                        keys.seal(); // the bulk is in; the rest arrives after the merge
                    }
                }
                keys.add(0, 0); // stands for (0, 1)
                model.add(List.of(0L, 0L));
                assertThat(keys.spilled()).isEqualTo(budget < 1 << 20);
                for (List<Long> k : model) {
                    assertThat(keys.contains(k.get(0), k.get(1))).as(k.toString()).isTrue();
                }
                for (int i = 0; i < 20_000; i++) {
                    long hi = random.nextInt(50) - 25L;
                    long lo = random.nextLong();
                    assertThat(keys.contains(hi, lo)).isEqualTo(model.contains(List.of(hi, lo)));
                }
            }
        }
        assertThat(dir.toFile().list()).as("nothing left on disk").isEmpty();
    }

    @Test
    void aSortOfPairsOrdersByTheHighHalfThenTheLowUnsigned() {
        Random random = new Random(3);
        int n = 5_000;
        long[] pairs = new long[2 * n];
        for (int i = 0; i < 2 * n; i++) {
            pairs[i] = i % 2 == 0 ? random.nextInt(7) - 3 : random.nextLong();
        }
        KeyHashes.sortPairs(pairs, n);
        for (int i = 1; i < n; i++) {
            assertThat(KeyHashes.compare(pairs[2 * i - 2], pairs[2 * i - 1], pairs[2 * i], pairs[2 * i + 1]))
                    .isLessThanOrEqualTo(0);
        }
    }

    @Test
    void anEmptySetHoldsNothing() throws Exception {
        try (KeyHashes keys = new KeyHashes(1 << 20, dir)) {
            assertThat(keys.isEmpty()).isTrue();
            assertThat(keys.contains(1, 2)).isFalse();
            keys.seal();
        }
        assertThat(Files.list(dir).count()).isZero();
    }
}
