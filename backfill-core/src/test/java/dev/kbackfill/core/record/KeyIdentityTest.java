package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class KeyIdentityTest {

    private static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void aScalarKeyIsTheSameKeyAsAMapOfItsOneColumn() {
        for (Object v : new Object[] {"k-1", 7, 7L, new byte[] {1, 2}, new BigDecimal("1.50"), null}) {
            Map<String, Object> plain = new LinkedHashMap<>();
            plain.put("kafka_key", v);
            assertThat(KeyIdentity.of(ScalarColumn.of("kafka_key", v))).isEqualTo(KeyIdentity.of(plain));
        }
        assertThat(KeyIdentity.of(ScalarColumn.of("kafka_key", "a"))).isNotEqualTo(KeyIdentity.of(ScalarColumn.of("k", "a")));
    }

    /**
     * A batch holds a key and decoded values per pending record: the change keeps the decoder's read-only maps as they
     * are (no wrapper), and asking them for their names keeps nothing per record.
     */
    @Test
    void aChangeKeepsNoWrapperOrViewPerRecord() {
        Map<String, Object> key = ScalarColumn.of("kafka_key", "k-1");
        Columns.Builder b = new Columns.Builder();
        Map<String, Object> first = b.put("id", 1L).put("name", "a").build();
        Map<String, Object> second = b.put("id", 2L).put("name", "b").build();
        Change c = new Change(key, first, 0, 0, 0);
        assertThat(c.key()).isSameAs(key);
        assertThat(c.values()).isSameAs(first);
        assertThat(first.keySet()).isSameAs(second.keySet()).containsExactly("id", "name");
        assertThat(key.keySet()).containsExactly("kafka_key");
        assertThat(key.values()).containsExactly("k-1");
        Map<String, Object> seen = new LinkedHashMap<>();
        key.forEach(seen::put);
        assertThat(seen).isEqualTo(Map.of("kafka_key", "k-1")).isEqualTo(key);
        assertThat(key.hashCode()).isEqualTo(Map.of("kafka_key", "k-1").hashCode());
    }

    @Test
    void fieldOrderDoesNotMakeAnotherKey() {
        assertThat(KeyIdentity.of(ordered("a", 1L, "b", 2L))).isEqualTo(KeyIdentity.of(ordered("b", 2L, "a", 1L)));
    }

    @Test
    void valuesSwappedBetweenFieldsAreAnotherKey() {
        assertThat(KeyIdentity.of(ordered("a", 1L, "b", 2L))).isNotEqualTo(KeyIdentity.of(ordered("a", 2L, "b", 1L)));
    }

    @Test
    void valuesCompareByContentAndType() {
        assertThat(KeyIdentity.of(Map.of("k", new byte[] {1, 2}))).isEqualTo(KeyIdentity.of(Map.of("k", new byte[] {1, 2})));
        assertThat(KeyIdentity.of(Map.of("k", 7))).isEqualTo(KeyIdentity.of(Map.of("k", 7L)));
        assertThat(KeyIdentity.of(Map.of("k", new BigDecimal("1.50")))).isEqualTo(KeyIdentity.of(Map.of("k", new BigDecimal("1.5"))));
        assertThat(KeyIdentity.of(Map.of("k", "1"))).isNotEqualTo(KeyIdentity.of(Map.of("k", 1L)));
    }

    @Test
    void reductionTreatsOneKeyInTwoFieldOrdersAsOneKey() {
        Change first = new Change(ordered("a", 1L, "b", 2L), Map.of("v", "x"), 0, 1, 1);
        Change second = new Change(ordered("b", 2L, "a", 1L), Map.of("v", "y"), 0, 2, 2);
        List<Change> reduced = Reduction.lastPerKey(List.of(first, second));
        assertThat(reduced).containsExactly(second);
    }

    /**
     * A key of several fields is one identity in every order its fields come in, and its text lists the fields by
     * name, each with its canonical value; keys that differ in one field's name or value are other identities.
     */
    @Test
    void aKeyOfManyFieldsIsOneIdentityInEveryOrderAndItsTextListsTheFieldsByName() {
        for (long seed = 1; seed <= 300; seed++) {
            java.util.Random random = new java.util.Random(seed);
            java.util.TreeMap<String, Object> sorted = new java.util.TreeMap<>();
            for (int n = 2 + random.nextInt(5); sorted.size() < n; ) {
                Object value = switch (random.nextInt(4)) {
                    case 0 -> "v" + random.nextInt(3);
                    case 1 -> (long) random.nextInt(3);
                    case 2 -> random.nextInt(3);
                    default -> new java.math.BigDecimal(random.nextInt(3) + ".00");
                };
                sorted.put("f" + random.nextInt(10), value);
            }
            List<String> names = new java.util.ArrayList<>(sorted.keySet());
            KeyIdentity first = null;
            for (int order = 0; order < 4; order++) {
                java.util.Collections.shuffle(names, random);
                Map<String, Object> key = new java.util.LinkedHashMap<>();
                names.forEach(n -> key.put(n, sorted.get(n)));
                KeyIdentity id = KeyIdentity.of(key);
                if (first == null) {
                    first = id;
                    StringBuilder text = new StringBuilder();
                    sorted.forEach((n, v) -> {
                        Object c = KeyIdentity.canonical(v);
                        text.append(n).append('\u0000').append(c.getClass().getSimpleName()).append(':').append(c)
                                .append('\u0001');
                    });
                    assertThat(id.text()).as("seed %d", seed).isEqualTo(text.toString());
                }
                assertThat(id).as("seed %d", seed).isEqualTo(first).hasSameHashCodeAs(first);
                assertThat(id.text()).isEqualTo(first.text());
            }
            Map<String, Object> other = new java.util.LinkedHashMap<>(sorted);
            String changed = names.get(random.nextInt(names.size()));
            other.put(changed, "other");
            assertThat(KeyIdentity.of(other)).as("seed %d", seed).isNotEqualTo(first);
            Map<String, Object> renamed = new java.util.LinkedHashMap<>(sorted);
            renamed.put("g" + changed, renamed.remove(changed));
            assertThat(KeyIdentity.of(renamed)).as("seed %d", seed).isNotEqualTo(first);
        }
    }
}
