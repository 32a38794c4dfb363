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

    /** A class path of its own that can grow, as the command line's does when it adds the lake libraries. */
    private static final class Growing extends java.net.URLClassLoader {
        Growing(List<java.net.URL> urls) {
            super(urls.toArray(java.net.URL[]::new), ClassLoader.getPlatformClassLoader());
        }

        /** The services files it was asked for. */
        final List<String> services = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

        void add(List<java.net.URL> urls) {
            urls.forEach(this::addURL);
        }

        @Override
        public java.util.Enumeration<java.net.URL> getResources(String name) throws java.io.IOException {
            if (name.startsWith("META-INF/services/")) {
                services.add(name);
            }
            return super.getResources(name);
        }
    }

    /** This test's class path, split: the shipped lake kinds' modules (Delta, Iceberg, their shared one), the rest. */
    private static Map<Boolean, List<java.net.URL>> lakeModulesAndTheRest() throws Exception {
        Map<Boolean, List<java.net.URL>> split = new java.util.HashMap<>(Map.of(true, new java.util.ArrayList<>(),
                false, new java.util.ArrayList<>()));
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            split.get(entry.matches(".*sink-(delta|iceberg|lake)\\b.*")).add(java.nio.file.Path.of(entry).toUri().toURL());
        }
        assertThat(split.get(true)).as("the lake kinds' modules on the test class path").hasSize(3);
        return split;
    }

    private static List<String> schemes(Class<?> factories, String... urls) throws Exception {
        List<String> found = new java.util.ArrayList<>();
        for (String url : urls) {
            Optional<?> kind = (Optional<?>) factories.getMethod("of", String.class).invoke(null, url);
            found.add(kind.isEmpty() ? "none" : (String) factories.getMethod("scheme").invoke(kind.get()));
        }
        return found;
    }

    /** SinkFactory as {@code fresh} sees it, as the thread's class loader, with {@code adding} registered. */
    private static Class<?> factoriesOf(Growing fresh, Runnable adding) throws Exception {
        Thread.currentThread().setContextClassLoader(fresh);
        fresh.loadClass(dev.kbackfill.resolver.OptionalLibraries.class.getName()).getMethod("addWith", Runnable.class)
                .invoke(null, adding);
        return fresh.loadClass(SinkFactory.class.getName());
    }

    private static List<String> allSchemes(Class<?> factories) throws Exception {
        List<String> listed = new java.util.ArrayList<>();
        for (Object kind : (List<?>) factories.getMethod("all").invoke(null)) {
            listed.add((String) factories.getMethod("scheme").invoke(kind));
        }
        return listed;
    }

    @Test
    void aShippedKindMissingFromTheClassPathIsFoundOnceWhatAddsItsLibrariesHasRunOnce() throws Exception {
        Map<Boolean, List<java.net.URL>> split = lakeModulesAndTheRest();
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        java.util.concurrent.atomic.AtomicInteger added = new java.util.concurrent.atomic.AtomicInteger();
        try (Growing fresh = new Growing(split.get(false)); Growing another = new Growing(split.get(false))) {
            Class<?> factories = factoriesOf(fresh, () -> {
                added.incrementAndGet();
                fresh.add(split.get(true));
            });
            assertThat(schemes(factories, "jdbc:sqlite:/t.db", "kafka:t")).containsExactly("jdbc", "kafka");
            assertThat(added).as("nothing added for kinds on the class path").hasValue(0);
            assertThat(schemes(factories, "delta:/t", "iceberg:/t", "delta:/u")).containsExactly("delta", "iceberg",
                    "delta");
            assertThat(added).hasValue(1);
            assertThat(fresh.services).as("found by name once added, not by the scan").isEmpty();
            // the scan of every kind (a message listing the forms) adds them first
            Class<?> others = factoriesOf(another, () -> {
                added.incrementAndGet();
                another.add(split.get(true));
            });
            assertThat(allSchemes(others)).containsExactly("delta", "iceberg", "jdbc", "kafka");
            assertThat(added).hasValue(2);
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    @Test
    void whatAddingTheLibrariesThrowsIsTheLookupsFailureAndAListOfEveryKindIsMadeWithoutThem() throws Exception {
        Map<Boolean, List<java.net.URL>> split = lakeModulesAndTheRest();
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        Runnable refuses = () -> {
            throw new IllegalStateException("the lake libraries are not on the class path");
        };
        try (Growing fresh = new Growing(split.get(false)); Growing another = new Growing(split.get(false))) {
            Class<?> factories = factoriesOf(fresh, refuses);
            assertThatThrownBy(() -> schemes(factories, "delta:/t"))
                    .hasRootCauseInstanceOf(IllegalStateException.class)
                    .hasRootCauseMessage("the lake libraries are not on the class path");
            Class<?> others = factoriesOf(another, refuses);
            assertThat(allSchemes(others)).containsExactly("jdbc", "kafka");
            assertThat(schemes(others, "jdbc:sqlite:/t.db", "delta:/t")).containsExactly("jdbc", "none");
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }
}
