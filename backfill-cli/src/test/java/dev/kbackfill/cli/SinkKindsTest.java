package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkConfigException;
import dev.kbackfill.core.sink.SinkFactory;
import dev.kbackfill.core.sink.SinkFactory.Capability;
import dev.kbackfill.core.sink.SinkFactory.OnSpark;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.SinkTarget;
import org.junit.jupiter.api.Test;

/** The shipped sink kinds as the command line finds them: by their factories on the classpath, never by name. */
class SinkKindsTest {

    @Test
    void aUrlFindsTheKindOfItsSchemeAndNoOther() {
        assertThat(SinkFactory.of("jdbc:postgresql://db/app?user=a")).map(SinkFactory::scheme).contains("jdbc");
        assertThat(SinkFactory.of("jdbc:sqlite:/data/k.db")).map(SinkFactory::scheme).contains("jdbc");
        assertThat(SinkFactory.of("delta:s3a://bucket/orders")).map(SinkFactory::scheme).contains("delta");
        assertThat(SinkFactory.of("iceberg:rest:http://cat#db.orders")).map(SinkFactory::scheme).contains("iceberg");
        assertThat(SinkFactory.of("kafka:orders_latest")).map(SinkFactory::scheme).contains("kafka");
        assertThat(SinkFactory.of("postgresql://db/app")).isEmpty();
        assertThat(SinkFactory.of("DELTA:/t")).isEmpty(); // schemes are lower case, as the factories take them
        assertThat(SinkFactory.of("")).isEmpty();
        assertThat(SinkFactory.of(null)).isEmpty();
        assertThat(SinkFactory.of("topic:orders")).isEmpty();
        assertThatThrownBy(() -> SinkFactory.factoryFor("topic:orders")).isInstanceOf(SinkConfigException.class)
                .hasMessageStartingWith("invalid --sink 'topic:orders': expected ").hasMessageContaining("kafka:TOPIC")
                .hasMessageContaining("jdbc:sqlite:FILE").hasMessageContaining("delta:PATH");
    }

    @Test
    void lakeTablesTakeStorageSettingsAndOnlyThey() {
        assertThat(SinkFactory.can("delta:/t", Capability.STORAGE_SETTINGS)).isTrue();
        assertThat(SinkFactory.can("iceberg:/t", Capability.STORAGE_SETTINGS)).isTrue();
        assertThat(SinkFactory.can("jdbc:sqlite:/t", Capability.STORAGE_SETTINGS)).isFalse();
        assertThat(SinkFactory.can("kafka:t", Capability.STORAGE_SETTINGS)).isFalse();
        assertThat(SinkFactory.can("nosuch:t", Capability.STORAGE_SETTINGS)).isFalse();
        assertThat(SinkFactory.formsWith(Capability.STORAGE_SETTINGS)).containsExactly("delta:...", "iceberg:...");
        assertThat(SinkFactory.listed(SinkFactory.formsWith(Capability.STORAGE_SETTINGS)))
                .isEqualTo("delta:... and iceberg:...");
        assertThat(SinkFactory.formsWith(Capability.OWN_CLUSTER)).containsExactly("kafka:TOPIC");
        assertThat(SinkFactory.formsWith(Capability.COMPACTS)).containsExactly("delta:...", "iceberg:...");
        assertThat(SinkFactory.formsWith(Capability.KEEPS_LEDGER)).containsExactly("delta:...", "iceberg:...",
                "jdbc:...");
    }

    @Test
    void eachKindSaysHowTheSparkEngineWritesIt() {
        assertThat(onSpark("delta:/data/orders", ConflictMode.NEWER_WINS)).isEqualTo(
                new OnSpark.DeltaMerge("/data/orders"));
        assertThat(onSpark("jdbc:sqlite:/data/k.db", ConflictMode.NEWER_WINS)).isEqualTo(new OnSpark.PartitionTasks(1));
        assertThat(onSpark("jdbc:postgresql://db/app", ConflictMode.NEWER_WINS)).isEqualTo(
                new OnSpark.PartitionTasks(8));
        assertThat(onSpark("kafka:t", ConflictMode.OVERWRITE)).isEqualTo(new OnSpark.PartitionTasks(8));
        assertThat(onSpark("kafka:t", ConflictMode.NEWER_WINS)).isInstanceOf(OnSpark.Refused.class);
        assertThat(onSpark("iceberg:/t", ConflictMode.NEWER_WINS)).isInstanceOf(OnSpark.Refused.class);
    }

    private static OnSpark onSpark(String url, ConflictMode conflict) {
        return SinkFactory.factoryFor(url).onSpark(SinkTarget.of(url, "orders", conflict, false));
    }

    @Test
    void eachKindNamesItsTargetAsOpenLineageDoes() {
        assertThat(dataset("jdbc:postgresql://db.internal:6543/app?sslmode=require", "orders"))
                .isEqualTo(new SinkFactory.Dataset("postgres://db.internal:6543", "app.public.orders"));
        assertThat(dataset("jdbc:postgresql://db.internal/app", "sales.orders"))
                .isEqualTo(new SinkFactory.Dataset("postgres://db.internal:5432", "app.sales.orders"));
        assertThat(dataset("jdbc:mariadb://maria:3307/shop", "orders"))
                .isEqualTo(new SinkFactory.Dataset("mysql://maria:3307", "shop.orders"));
        assertThat(dataset("jdbc:sqlite:/var/lib/k/orders.db", "orders"))
                .isEqualTo(new SinkFactory.Dataset("sqlite:///var/lib/k/orders.db", "orders"));
        assertThat(dataset("delta:/data/lake/orders", "orders"))
                .isEqualTo(new SinkFactory.Dataset("file", "/data/lake/orders"));
        assertThat(dataset("delta:s3a://lake/tables/orders", "orders"))
                .isEqualTo(new SinkFactory.Dataset("s3://lake", "tables/orders"));
        assertThat(dataset("iceberg:/data/ice/orders", "orders"))
                .isEqualTo(new SinkFactory.Dataset("file", "/data/ice/orders"));
        assertThat(dataset("iceberg:rest:http://catalog:8181#sales.orders", "orders"))
                .isEqualTo(new SinkFactory.Dataset("http://catalog:8181", "sales.orders"));
    }

    private static SinkFactory.Dataset dataset(String url, String table) {
        SinkSettings settings = SinkTarget.of(url, table, ConflictMode.NEWER_WINS, false).settings("orders", Map.of());
        return SinkFactory.factoryFor(url).dataset(settings);
    }

    @Test
    void listedFormsReadAsASentence() {
        assertThat(SinkFactory.listed(List.of())).isEmpty();
        assertThat(SinkFactory.listed(List.of("a"))).isEqualTo("a");
        assertThat(SinkFactory.listed(List.of("a", "b", "c"))).isEqualTo("a, b and c");
    }
    @Test
    void theShippedKindsNamedInCoreAreTheClassesTheServicesFilesNameAndTheSameObjects() {
        Map<String, String> byServices = new java.util.TreeMap<>();
        java.util.ServiceLoader.load(SinkFactory.class).stream()
                .forEach(p -> byServices.put(p.get().scheme(), p.type().getName()));
        assertThat(SinkFactory.Kinds.SHIPPED).isEqualTo(byServices);
        for (String url : List.of("jdbc:sqlite:/t.db", "delta:/t", "iceberg:/t", "kafka:t")) {
            SinkFactory shipped = SinkFactory.factoryFor(url);
            assertThat(SinkFactory.all()).filteredOn(f -> f == shipped).hasSize(1);
        }
    }

    @Test
    void aShippedKindIsFoundWithoutReadingEveryJarsServicesFilesAndOthersOnlyWithThem() throws Exception {
        List<java.net.URL> urls = new java.util.ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            urls.add(java.nio.file.Path.of(entry).toUri().toURL());
        }
        List<String> asked = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        // a class path of its own, where nothing found a kind yet; it notes every services file it is asked for
        try (java.net.URLClassLoader fresh = new java.net.URLClassLoader(urls.toArray(java.net.URL[]::new),
                ClassLoader.getPlatformClassLoader()) {
            @Override
            public java.util.Enumeration<java.net.URL> getResources(String name) throws java.io.IOException {
                asked.add(name);
                return super.getResources(name);
            }
        }) {
            Thread.currentThread().setContextClassLoader(fresh);
            Class<?> factories = fresh.loadClass(SinkFactory.class.getName());
            java.lang.reflect.Method of = factories.getMethod("of", String.class);
            java.lang.reflect.Method scheme = factories.getMethod("scheme");
            for (String url : List.of("jdbc:sqlite:/t.db", "jdbc:postgresql://db/app", "delta:/t", "iceberg:/t",
                    "kafka:t")) {
                Optional<?> kind = (Optional<?>) of.invoke(null, url);
                assertThat(kind).as(url).isPresent();
                assertThat(scheme.invoke(kind.get())).isEqualTo(url.substring(0, url.indexOf(':')));
            }
            assertThat(asked).as("services files read").noneMatch(n -> n.startsWith("META-INF/services/"));
            assertThat((Optional<?>) of.invoke(null, "rows:/t")).isEmpty(); // no shipped kind: every jar is read
            assertThat(asked).contains("META-INF/services/" + SinkFactory.class.getName());
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }
}
