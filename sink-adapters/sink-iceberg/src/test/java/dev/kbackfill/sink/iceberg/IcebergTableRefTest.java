package dev.kbackfill.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import dev.kbackfill.core.sink.SinkConfigException;
import org.junit.jupiter.api.Test;

class IcebergTableRefTest {

    @Test
    void aPathTableIsItsPathMadeAbsolute() {
        assertThat(IcebergTableRef.parse("iceberg:/data/lake/orders", "t"))
                .isEqualTo(new IcebergTableRef(Optional.empty(), "/data/lake/orders", List.of(), ""));
        assertThat(IcebergTableRef.parse("iceberg:lake/orders", "t").location())
                .isEqualTo(Path.of("lake/orders").toAbsolutePath().toString());
        assertThat(IcebergTableRef.parse("iceberg:hdfs://nn/lake/orders", "t").location()).isEqualTo("hdfs://nn/lake/orders");
    }

    @Test
    void aJdbcCatalogKeepsItsJdbcUrlAndTakesNamespaceAndTableAfterTheHash() {
        IcebergTableRef r = IcebergTableRef.parse("iceberg:jdbc:postgresql://db:5432/lake?ssl=true#sales.eu.orders", "t");
        assertThat(r.catalog()).contains(IcebergTableRef.Catalog.JDBC);
        assertThat(r.location()).isEqualTo("jdbc:postgresql://db:5432/lake?ssl=true");
        assertThat(r.namespace()).containsExactly("sales", "eu");
        assertThat(r.table()).isEqualTo("orders");
    }

    @Test
    void withoutAHashACatalogTableIsTheTableOptionInTheDefaultNamespace() {
        IcebergTableRef r = IcebergTableRef.parse("iceberg:rest:https://catalog.internal/api", "orders");
        assertThat(r.catalog()).contains(IcebergTableRef.Catalog.REST);
        assertThat(r.location()).isEqualTo("https://catalog.internal/api");
        assertThat(r.namespace()).containsExactly("default");
        assertThat(r.table()).isEqualTo("orders");
        assertThat(IcebergTableRef.parse("iceberg:hadoop:/wh#db.orders", "t").location()).isEqualTo("/wh");
    }

    @Test
    void incompleteUrlsNameEveryForm() {
        for (String bad : List.of("iceberg:", "iceberg:jdbc:", "iceberg:jdbc:sqlite:/c.db#orders",
                "iceberg:hadoop:#db.orders", "iceberg:rest:http://x#db.")) {
            assertThatThrownBy(() -> IcebergTableRef.parse(bad, "t")).as(bad).isInstanceOf(SinkConfigException.class)
                    .hasMessageStartingWith("invalid --sink '" + bad + "': expected iceberg:PATH, "
                            + "iceberg:jdbc:JDBC-URL#NAMESPACE.TABLE, iceberg:hadoop:WAREHOUSE#NAMESPACE.TABLE, "
                            + "iceberg:rest:URI#NAMESPACE.TABLE");
        }
    }

    @Test
    void aPasswordInTheUrlIsNotShown() {
        IcebergTableRef r = IcebergTableRef.parse("iceberg:jdbc:postgresql://db/lake?user=u&password=secret#a.b", "t");
        assertThat(r.shown()).doesNotContain("secret").contains("password=***");
    }
}
