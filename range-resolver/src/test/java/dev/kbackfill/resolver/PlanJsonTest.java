package dev.kbackfill.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

class PlanJsonTest {

    private static final Instant NOW = Instant.parse("2024-01-03T00:00:00Z");
    private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

    private Plan samplePlan() {
        FakeOffsetSource topic = new FakeOffsetSource("orders", 3);
        topic.compacted = true;
        topic.log(0).append(T0, T0.plusSeconds(60), T0.plusSeconds(120)).openTransactionAt(2);
        topic.log(1).append(T0, T0.plusSeconds(60));
        return new RangeResolver(topic, Clock.fixed(NOW, ZoneOffset.UTC)).resolve(BackfillRequest.builder("orders")
                .from("2024-01-01T01:01").to("-1d").zone(ZoneId.of("Europe/Paris"))
                .partitions(new TreeSet<>(List.of(0, 1, 2))).build());
    }

    @Test
    void aPlanSurvivesTheJsonRoundTrip() {
        Plan plan = samplePlan();
        Plan read = Plan.fromJson(plan.toJson());
        assertThat(read).isEqualTo(plan);
        assertThat(read.allNotes()).isNotEmpty();
    }

    @Test
    void theDocumentIsTaggedAndVersioned() {
        String json = samplePlan().toJson();
        assertThat(json).contains("\"format\" : \"kbackfill-plan\"").contains("\"version\" : 1")
                .contains("\"topicId\" : \"topic-id-1\"").contains("\"clusterId\" : \"fake-cluster\"")
                .contains("\"from\" : \"2024-01-01T01:01\"").contains("\"to\" : \"-1d\"")
                .contains("\"kind\" : \"OPEN_TRANSACTION\"");
    }

    @Test
    void aNewerVersionIsRefusedNotMisread() {
        String json = samplePlan().toJson().replace("\"version\" : 1", "\"version\" : 2");
        assertThatThrownBy(() -> Plan.fromJson(json))
                .isInstanceOf(RequestException.class)
                .hasMessage("kbackfill plan version 2 is not supported: this kbackfill reads version 1");
    }

    @Test
    void somethingElseIsNotAPlan() {
        assertThatThrownBy(() -> Plan.fromJson("{\"orders\":{\"0\":1}}"))
                .isInstanceOf(RequestException.class).hasMessageStartingWith("not a kbackfill plan");
        assertThatThrownBy(() -> Plan.fromJson("{"))
                .isInstanceOf(RequestException.class).hasMessageStartingWith("not a kbackfill plan: malformed JSON");
        String missing = samplePlan().toJson().replace("\"topicId\"", "\"topicIdentifier\"");
        assertThatThrownBy(() -> Plan.fromJson(missing))
                .isInstanceOf(RequestException.class).hasMessage("not a valid kbackfill plan: missing field \"topicId\"");
    }

    @Test
    void sparkOffsetsAreTheHalfOpenBounds() {
        Plan plan = samplePlan();
        // partition 0: from 01:01 in Paris = 00:01Z -> offset 1; to -1d = 2024-01-02 -> no record, end at LSO 2
        assertThat(plan.sparkStartingOffsets()).isEqualTo("{\"orders\":{\"0\":1,\"1\":1,\"2\":0}}");
        assertThat(plan.sparkEndingOffsets()).isEqualTo("{\"orders\":{\"0\":2,\"1\":2,\"2\":0}}");
    }
}
