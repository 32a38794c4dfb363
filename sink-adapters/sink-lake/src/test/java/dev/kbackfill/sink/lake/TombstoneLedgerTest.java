package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;

import dev.kbackfill.core.version.Version;
import org.junit.jupiter.api.Test;

class TombstoneLedgerTest {

    private static final Version OLDER = new Version("t", 0, 3, 1_000);
    private static final Version NEWER = new Version("t", 0, 5, 2_000);

    @Test
    void aCompoundKeyHasOneTextWhateverTheOrderOfItsColumns() {
        String regionFirst = TombstoneLedger.keyText(List.of("region", "id"), List.of("eu", 7L));
        String idFirst = TombstoneLedger.keyText(List.of("id", "region"), List.of(7L, "eu"));
        assertThat(regionFirst).isEqualTo(idFirst).isEqualTo("{\"id\":7,\"region\":\"eu\"}");
    }

    @Test
    void aKeyOfOneColumnKeepsTheTextLedgersHeldBefore() {
        assertThat(TombstoneLedger.Key.of(List.of("kafka_key"), List.of("k7")))
                .isEqualTo(new TombstoneLedger.Key("[\"k7\"]", null));
    }

    /** The list of values alone made (a=1, b=2) and (b=1, a=2) one key: the second's older record stayed out. */
    @Test
    void twoKeysWhoseValuesSwapColumnsAreTwoKeys() {
        TombstoneLedger ledger = new TombstoneLedger(b -> Optional.empty());
        ledger.record(TombstoneLedger.Key.of(List.of("a", "b"), List.of(1L, 2L)), NEWER);
        assertThat(ledger.deleted(TombstoneLedger.Key.of(List.of("b", "a"), List.of(1L, 2L)))).isNull();
        assertThat(ledger.deleted(TombstoneLedger.Key.of(List.of("b", "a"), List.of(2L, 1L)))).isEqualTo(NEWER);
    }

    /**
     * A ledger written before keys were named holds a compound key as the list of its values in the order its batch
     * gave them: a key given in that order finds it, and where today's entry of the key is held too, the newer counts.
     */
    @Test
    void anEntryOfBeforeIsFoundInItsOrderAndTheNewerOfTwoEntriesCounts() {
        TombstoneLedger before = new TombstoneLedger(b -> Optional.empty());
        before.record("[7,\"eu\"]", NEWER);
        Map<Integer, String> stored = before.changed();
        TombstoneLedger ledger = new TombstoneLedger(b -> Optional.ofNullable(stored.get(b)));
        TombstoneLedger.Key idFirst = TombstoneLedger.Key.of(List.of("id", "region"), List.of(7L, "eu"));
        assertThat(ledger.deleted(idFirst)).isEqualTo(NEWER);

        ledger.record(idFirst, OLDER);
        assertThat(ledger.deleted(idFirst)).isEqualTo(NEWER);
        TombstoneLedger.Key regionFirst = TombstoneLedger.Key.of(List.of("region", "id"), List.of("eu", 7L));
        assertThat(ledger.deleted(regionFirst)).as("today's entry, named").isEqualTo(OLDER);

        assertThat(TombstoneLedger.fromLegacy("[7,\"eu\"]", List.of("id", "region"))).isEqualTo(idFirst.text());
        assertThat(TombstoneLedger.fromLegacy("[\"k7\"]", List.of("kafka_key"))).isEqualTo("[\"k7\"]");
        assertThat(TombstoneLedger.fromLegacy(idFirst.text(), List.of("id", "region"))).isEqualTo(idFirst.text());
    }

    /**
     * Over seeded histories of deletes of keys of two or three columns, each recorded and looked up with its columns
     * in a random order, with values that often repeat across columns, and the ledger stored and read again between
     * some of them: a key is found exactly when it was deleted, with its newest delete.
     */
    @Test
    void aDeleteIsFoundExactlyForItsKeyWhateverTheOrderItsColumnsComeIn() {
        for (long seed = 0; seed < 200; seed++) {
            Random random = new Random(seed);
            List<String> columns = new ArrayList<>(List.of("a", "b", "c").subList(0, 2 + random.nextInt(2)));
            Map<Map<String, Object>, Version> model = new HashMap<>();
            Map<Integer, String> stored = new HashMap<>();
            TombstoneLedger ledger = new TombstoneLedger(b -> Optional.ofNullable(stored.get(b)));
            for (int step = 0; step < 60; step++) {
                Map<String, Object> key = new TreeMap<>();
                columns.forEach(c -> key.put(c, random.nextBoolean() ? (Object) (long) random.nextInt(3)
                        : String.valueOf(random.nextInt(3))));
                Version v = new Version("t", 0, step, step);
                if (random.nextInt(3) == 0) {
                    ledger.record(keyOf(key, columns, random), v);
                    model.merge(key, v, (a, b) -> Version.compare(a, b) >= 0 ? a : b);
                } else {
                    assertThat(ledger.deleted(keyOf(key, columns, random))).as("seed %d step %d key %s", seed, step, key)
                            .isEqualTo(model.get(key));
                }
                if (random.nextInt(10) == 0) {
                    stored.putAll(ledger.changed());
                    ledger = new TombstoneLedger(b -> Optional.ofNullable(stored.get(b)));
                }
            }
        }
    }

    private static TombstoneLedger.Key keyOf(Map<String, Object> key, List<String> columns, Random random) {
        List<String> order = new ArrayList<>(columns);
        Collections.shuffle(order, random);
        return TombstoneLedger.Key.of(order, order.stream().map(key::get).toList());
    }
}
