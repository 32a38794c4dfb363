package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class EditDistanceTest {

    @Test
    void distancesUpToTwoAreExactAndFartherNamesAreThree() {
        assertThat(EditDistance.atMost2("orders", "orders")).isZero();
        assertThat(EditDistance.atMost2("ordres", "orders")).isEqualTo(2);
        assertThat(EditDistance.atMost2("order", "orders")).isEqualTo(1);
        assertThat(EditDistance.atMost2("o", "orders")).isEqualTo(3);
    }

    @Test
    void theNearestCandidateWithinTwoEditsIsSuggested() {
        assertThat(EditDistance.nearest("ordrs", List.of("payments", "orders", "orders-v2"))).contains("orders");
        assertThat(EditDistance.nearest("Orders", List.of("orders"))).contains("orders");
        assertThat(EditDistance.nearest("invoices", List.of("orders", "payments"))).isEmpty();
        assertThat(EditDistance.nearest("x", List.of())).isEmpty();
    }
}
