package dev.kbackfill.core.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

class ColumnsTest {

    /**
     * Columns without some fields are the map a copy with those fields removed was (the decoder's way before):
     * the same entries in the same order, whatever the shape and whichever fields, present or not; and every record
     * of one shape gets one shape back, so a check done once per shape stays once per shape.
     */
    @Test
    void columnsWithoutFieldsEqualACopyWithThemRemovedAndRecordsOfOneShapeShareTheResultsShape() {
        for (long seed = 1; seed <= 200; seed++) {
            Random random = new Random(seed);
            int size = random.nextInt(12);
            List<String> names = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                names.add("f" + random.nextInt(20) + (i % 3 == 0 ? "" : "_" + i));
            }
            names = new ArrayList<>(new java.util.LinkedHashSet<>(names)); // a shape names a field once
            List<String> fields = new ArrayList<>();
            for (int i = random.nextInt(4); i > 0; i--) {
                fields.add(random.nextBoolean() && !names.isEmpty() ? names.get(random.nextInt(names.size()))
                        : "absent" + i);
            }
            Columns.Builder builder = new Columns.Builder();
            Object shape = null;
            for (int record = 0; record < 3; record++) {
                Map<String, Object> expected = new LinkedHashMap<>();
                for (String name : names) {
                    Object value = random.nextInt(5) == 0 ? null : name + "=" + random.nextInt(100);
                    builder.put(name, value);
                    expected.put(name, value);
                }
                Columns built = (Columns) builder.build();
                fields.forEach(expected::remove);
                Columns without = built.without(fields);
                assertThat(without).as("seed %d", seed).isEqualTo(expected);
                assertThat(List.copyOf(without.keySet())).as("seed %d", seed).isEqualTo(List.copyOf(expected.keySet()));
                assertThat(new ArrayList<>(without.entrySet())).isEqualTo(new ArrayList<>(expected.entrySet()));
                for (String name : names) {
                    assertThat(without.containsKey(name)).isEqualTo(expected.containsKey(name));
                    assertThat(without.get(name)).isEqualTo(expected.get(name));
                }
                if (shape != null) {
                    assertThat(without.shape()).as("seed %d: one shape for every record of one shape", seed)
                            .isSameAs(shape);
                }
                shape = without.shape();
                if (fields.stream().noneMatch(names::contains)) {
                    assertThat(without).isSameAs(built);
                }
            }
        }
    }
}
