package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PartitionFilterTest {

    @Test
    void listsAndRangesCombine() {
        assertThat(PartitionFilter.parse("0,2-5, 9")).containsExactly(0, 2, 3, 4, 5, 9);
        assertThat(PartitionFilter.parse("3")).containsExactly(3);
    }

    @Test
    void formatsBackCompactly() {
        assertThat(PartitionFilter.format(new TreeSet<>(java.util.List.of(0, 2, 3, 4, 5, 9)))).isEqualTo("0,2-5,9");
        assertThat(PartitionFilter.format(new TreeSet<>())).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a", "1,,2", "5-2", "-1", "1-"})
    void rejectsWhatIsNotAPartitionList(String text) {
        assertThatThrownBy(() -> PartitionFilter.parse(text))
                .isInstanceOf(RequestException.class)
                .hasMessageStartingWith("invalid partitions '" + text + "'")
                .hasMessageEndingWith("expected partition numbers and ranges, e.g. 0,2-5");
    }
}
