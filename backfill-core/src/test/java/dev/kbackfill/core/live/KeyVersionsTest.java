package dev.kbackfill.core.live;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The newest place of each key answers exactly as a map in memory would, whether its entries stay in memory, go to
 * disk in many runs, are merged into one, or arrive after the merge; and nothing is left on disk when it is closed.
 */
class KeyVersionsTest {

    @TempDir
    Path dir;

    @Test
    void answersAsAMapInMemoryWhateverWentToDisk() {
        Random random = new Random(52);
        for (long budget : new long[] {1 << 22, 1024L * KeyVersions.BYTES_PER_MEMORY_ENTRY}) {
            Map<List<Long>, KeyVersions.Place> model = new HashMap<>();
            try (KeyVersions keys = new KeyVersions(budget, dir)) {
                for (int i = 0; i < 20_000; i++) {
                    // few distinct high halves, of both signs: the unsigned order is exercised; many repeats
                    long hi = random.nextInt(50) - 25L;
                    long lo = random.nextInt(600) - 300L;
                    KeyVersions.Place place = new KeyVersions.Place(random.nextInt(5), random.nextInt(3),
                            random.nextInt(1000));
                    keys.add(new long[] {hi, lo}, place);
                    // (0, 0) stands for (0, 1), as the structure holds it
                    model.merge(List.of(hi, hi == 0 && lo == 0 ? 1L : lo), place, (a, b) -> b.after(a) ? b : a);
                    if (i == 15_000) {
                        keys.seal(); // the bulk is in; the rest arrives after the merge
                    }
                }
                keys.add(new long[] {0, 0}, new KeyVersions.Place(1, 0, 0)); // stands for (0, 1)
                model.merge(List.of(0L, 1L), new KeyVersions.Place(1, 0, 0), (a, b) -> b.after(a) ? b : a);
                assertThat(keys.spilled()).isEqualTo(budget < 1 << 22);
                model.forEach((k, place) -> assertThat(keys.newest(new long[] {k.get(0), k.get(1)}))
                        .as(k.toString()).isEqualTo(place));
                for (int i = 0; i < 5_000; i++) {
                    long hi = random.nextInt(60) - 30L;
                    long lo = random.nextInt(700) - 350L;
                    assertThat(keys.newest(new long[] {hi, lo}))
                            .isEqualTo(model.get(List.of(hi, hi == 0 && lo == 0 ? 1L : lo)));
                }
            }
        }
        assertThat(dir.toFile().list()).as("nothing left on disk").isEmpty();
    }

    @Test
    void theNewerPlaceIsTheLaterLogTimeThenPartitionThenOffset() {
        KeyVersions.Place a = new KeyVersions.Place(10, 0, 99);
        assertThat(new KeyVersions.Place(11, 0, 0).after(a)).isTrue();
        assertThat(new KeyVersions.Place(10, 1, 0).after(a)).isTrue();
        assertThat(new KeyVersions.Place(10, 0, 100).after(a)).isTrue();
        assertThat(a.after(a)).isFalse();
        assertThat(new KeyVersions.Place(9, 5, 500).after(a)).isFalse();
    }

    @Test
    void entriesSortByTheirHashUnsigned() {
        Random random = new Random(3);
        int n = 5_000;
        long[] entries = new long[5 * n];
        for (int i = 0; i < 5 * n; i++) {
            entries[i] = i % 5 == 0 ? random.nextInt(7) - 3 : random.nextLong();
        }
        KeyVersions.sortEntries(entries, n);
        for (int i = 1; i < n; i++) {
            assertThat(KeyVersions.compare(entries[5 * i - 5], entries[5 * i - 4], entries[5 * i], entries[5 * i + 1]))
                    .isLessThanOrEqualTo(0);
        }
    }
}
