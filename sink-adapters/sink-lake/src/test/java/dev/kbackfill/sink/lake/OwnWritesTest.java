package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

class OwnWritesTest {

    private static final long HEAP = 64L << 20;
    /** A key of one column, the table's first. */
    private static final int[] ONE = {0};

    private static Set<List<Object>> keys(String... names) {
        Set<List<Object>> keys = new HashSet<>();
        for (String n : names) {
            keys.add(List.of(n));
        }
        return keys;
    }

    @Test
    void fromAnEmptyTableOnlyKeysTheSinkWroteAreProbed() {
        OwnWrites own = new OwnWrites(HEAP);
        assertThat(own.toProbe(null, keys("a", "b"), ONE)).as("nothing known yet").isEqualTo(keys("a", "b"));
        own.committed(null, true, true, 1L, keys("a"), ONE);
        assertThat(own.toProbe(1L, keys("a", "b"), ONE)).isEqualTo(keys("a"));
        own.committed(1L, false, true, 2L, List.of(), ONE); // a commit of state only, on the last
        own.committed(2L, false, true, 3L, keys("b"), ONE);
        assertThat(own.toProbe(3L, keys("a", "b", "c"), ONE)).isEqualTo(keys("a", "b"));
    }

    /** A batch orders a compound key as its records do: a key written as (a, b) is known when it comes as (b, a). */
    @Test
    void aCompoundKeyIsKnownWhateverTheOrderOfItsColumnsInTheBatch() {
        OwnWrites own = new OwnWrites(HEAP);
        own.committed(null, true, true, 1L, List.of(List.of("day-1", 7L), List.of("day-2", 8L)), new int[] {3, 5});
        Set<List<Object>> reversed = Set.of(List.of(7L, "day-1"), List.of(8L, "day-1"), List.of(8L, "day-2"));
        assertThat(own.toProbe(1L, reversed, new int[] {5, 3}))
                .isEqualTo(Set.of(List.of(7L, "day-1"), List.of(8L, "day-2")));
    }

    @Test
    void everyKeyIsProbedOnceAnotherWriterCommittedOrOnATableThatHeldRows() {
        OwnWrites own = new OwnWrites(HEAP);
        own.committed(null, true, true, 1L, keys("a"), ONE);
        assertThat(own.toProbe(2L, keys("a", "b"), ONE)).as("planned on another's version").isEqualTo(keys("a", "b"));
        own.committed(2L, false, true, 3L, keys("b"), ONE); // made on another's version 2
        assertThat(own.toProbe(3L, keys("a", "b", "c"), ONE)).isEqualTo(keys("a", "b", "c"));

        OwnWrites notOnBase = new OwnWrites(HEAP);
        notOnBase.committed(null, true, true, 1L, keys("a"), ONE);
        notOnBase.committed(1L, false, false, 3L, keys("b"), ONE); // another's commit came between
        assertThat(notOnBase.toProbe(3L, keys("c"), ONE)).isEqualTo(keys("c"));

        OwnWrites existing = new OwnWrites(HEAP);
        existing.committed(5L, false, true, 6L, keys("a"), ONE);
        assertThat(existing.toProbe(6L, keys("c"), ONE)).as("a table that held rows before").isEqualTo(keys("c"));

        OwnWrites forgotten = new OwnWrites(HEAP);
        forgotten.committed(null, true, true, 1L, keys("a"), ONE);
        forgotten.forget();
        assertThat(forgotten.toProbe(1L, keys("c"), ONE)).isEqualTo(keys("c"));
    }

    /**
     * Whatever the order of the sink's commits, others' commits, state commits and forgetting, a key that has a row in
     * the table is always probed: seeded random histories against a model of the table's keys.
     */
    @Test
    void aKeyWithARowIsAlwaysProbedWhateverTheHistory() {
        for (long seed = 0; seed < 300; seed++) {
            Random random = new Random(seed);
            OwnWrites own = new OwnWrites(HEAP);
            Set<List<Object>> inTable = new HashSet<>();
            Long head = null;
            long version = 0;
            for (int step = 0; step < 40; step++) {
                Set<List<Object>> batch = new HashSet<>();
                for (int i = random.nextInt(4); i > 0; i--) {
                    batch.add(List.of("k" + random.nextInt(30)));
                }
                switch (random.nextInt(6)) {
                    case 0, 1, 2 -> { // the sink's batch, planned on the head
                        Set<List<Object>> probed = own.toProbe(head, batch, ONE);
                        for (List<Object> k : batch) {
                            if (inTable.contains(k)) {
                                assertThat(probed).as("seed %d step %d", seed, step).contains(k);
                            }
                        }
                        own.committed(head, inTable.isEmpty(), true, ++version, batch, ONE);
                        inTable.addAll(batch);
                        head = version;
                    }
                    case 3 -> { // another writer's rows
                        inTable.addAll(batch);
                        head = ++version;
                    }
                    case 4 -> { // the sink's commit of state only
                        own.committed(head, inTable.isEmpty(), true, ++version, List.of(), ONE);
                        head = version;
                    }
                    default -> own.forget();
                }
                List<List<Object>> everyKey = new ArrayList<>(inTable);
                Set<List<Object>> probed = own.toProbe(head, new HashSet<>(everyKey), ONE);
                assertThat(probed).as("seed %d step %d", seed, step).containsAll(everyKey);
            }
        }
    }
}
