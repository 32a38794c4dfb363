package dev.kbackfill.core.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;

import org.junit.jupiter.api.Test;

/** A --sink URL's kind and parts come from one parser. */
class SinkUrlTest {

    @Test
    void eachKindIsToldByItsPrefixWithThePartAfterIt() {
        assertThat(SinkUrl.parse("jdbc:postgresql://db/app?user=a")).contains(new SinkUrl.Jdbc("jdbc:postgresql://db/app?user=a"));
        assertThat(((SinkUrl.Jdbc) SinkUrl.parse("jdbc:postgresql://db/app").orElseThrow()).driver()).isEqualTo("postgresql");
        assertThat(((SinkUrl.Jdbc) SinkUrl.parse("jdbc:sqlite:/data/k.db").orElseThrow()).driver()).isEqualTo("sqlite");
        assertThat(((SinkUrl.Jdbc) SinkUrl.parse("jdbc:h2").orElseThrow()).driver()).isEqualTo("h2");
        assertThat(SinkUrl.parse("delta:s3a://bucket/orders")).contains(new SinkUrl.Delta("delta:s3a://bucket/orders",
                "s3a://bucket/orders"));
        assertThat(SinkUrl.parse("iceberg:rest:http://cat#db.orders")).contains(new SinkUrl.Iceberg(
                "iceberg:rest:http://cat#db.orders", "rest:http://cat#db.orders"));
        assertThat(SinkUrl.parse("kafka:orders_latest")).contains(new SinkUrl.Kafka("kafka:orders_latest", "orders_latest"));
    }

    @Test
    void aUrlOfNoKindHasNone() {
        assertThat(SinkUrl.parse("postgresql://db/app")).isEmpty();
        assertThat(SinkUrl.parse("DELTA:/t")).isEmpty(); // prefixes are lower case, as the factories took them
        assertThat(SinkUrl.parse("")).isEmpty();
        assertThat(SinkUrl.parse(null)).isEmpty();
        assertThat(SinkUrl.is("topic:orders", SinkUrl.Kafka.class)).isFalse();
    }

    @Test
    void lakeTablesAreDeltaAndIceberg() {
        assertThat(SinkUrl.isLake("delta:/t")).isTrue();
        assertThat(SinkUrl.isLake("iceberg:/t")).isTrue();
        assertThat(SinkUrl.isLake("jdbc:sqlite:/t")).isFalse();
        assertThat(SinkUrl.isLake("kafka:t")).isFalse();
        assertThat(SinkUrl.is("delta:/t", SinkUrl.Delta.class)).isTrue();
        assertThat(SinkUrl.is("delta:/t", SinkUrl.Iceberg.class)).isFalse();
    }

    @Test
    void settingsOfNoKindAreRefusedNamingTheUrlWithoutItsPassword() {
        SinkSettings settings = new SinkSettings("postgres://u:secret@db/app", "orders", Optional.empty(),
                Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE, true, false,
                SinkSettings.MetadataColumns.DEFAULT);
        assertThatThrownBy(settings::sinkUrl).isInstanceOf(SinkConfigException.class)
                .hasMessageContaining("invalid --sink 'postgres://u:***@db/app'").hasMessageNotContaining("secret");
    }
}
