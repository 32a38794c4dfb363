package dev.kbackfill.core.sink;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * One kind of sink: creates sinks for the {@code --sink} URLs of its scheme and says what the kind can do. Found with
 * {@link ServiceLoader} ({@code META-INF/services/dev.kbackfill.core.sink.SinkFactory}), so a sink module on the
 * classpath is all a new kind takes: the command line, the job and the engines ask a kind's {@link #capabilities}
 * and its {@link #onSpark} answer, never its name.
 */
public interface SinkFactory {

    /** The URL scheme of the kind, without its colon: {@code jdbc}, {@code delta}. */
    String scheme();

    /** Whether this factory handles the URL: by default every URL of its {@link #scheme}. */
    default boolean accepts(String url) {
        return url != null && url.startsWith(scheme() + ":");
    }

    /**
     * What a sink of this kind can do or takes, beyond writing rows and storing its jobs: what the command line
     * checks options against, and what it offers.
     */
    enum Capability {
        /** The URL names a database; {@code --table} names the table, whose tombstone ledger is its own. */
        NAMED_TABLES,
        /**
         * A lake table: its filesystem or catalog takes settings ({@code --sink-property}), a table it creates
         * takes properties ({@code --table-property}) and a partitioning ({@code --partition-by}).
         */
        STORAGE_SETTINGS,
        /** Reads a client settings file where it opens ({@code --sink-command-config}). */
        CLIENT_FILE,
        /**
         * Writes to a cluster of its own, the source's unless told ({@code --sink-bootstrap-server}); creates its
         * destination with {@code --create-topic}.
         */
        OWN_CLUSTER,
        /** Keeps records whole (key, value, headers): no columns to evolve, values not decoded. */
        COPIES_RECORDS,
        /** Records the deletes it applied in a tombstone ledger, which {@code compact --forget-deletes-before} prunes. */
        KEEPS_LEDGER,
        /** Rewrites its files without a data change ({@link #compact}). */
        COMPACTS
    }

    /** What sinks of this kind can do. */
    Set<Capability> capabilities();

    /** The URL forms, for error messages, e.g. {@code jdbc:postgresql://HOST/DB}. */
    List<String> forms();

    /** The kind's URLs in one short form, for messages that list kinds: {@code delta:...}, {@code kafka:TOPIC}. */
    default String shortForm() {
        return scheme() + ":...";
    }

    /**
     * A dataset as OpenLineage names one: where it lives ({@code postgres://host:5432}, {@code file},
     * {@code s3://bucket}, {@code kafka://host:9092}) and what it is there ({@code db.schema.table}, a path, a topic).
     */
    record Dataset(String namespace, String name) {
    }

    /**
     * The target as a lineage event names it, by OpenLineage's naming conventions where they cover the kind. By
     * default the kind's scheme as the namespace and the URL (without credentials) and table as the name.
     */
    default Dataset dataset(SinkSettings settings) {
        return new Dataset(scheme(), canonical(settings.url()) + "#" + settings.table());
    }

    /**
     * The dataset of a Kafka topic: the first of {@code bootstrapServers} as {@code kafka://host:port}, the topic as
     * its name (OpenLineage's convention for Kafka).
     */
    static Dataset kafkaTopic(Object bootstrapServers, String topic) {
        String first = String.valueOf(bootstrapServers).split(",")[0].strip();
        return new Dataset("kafka://" + first, topic);
    }

    /**
     * The dataset of a table at a location (a lake table's folder): {@code file} and the absolute path locally,
     * {@code s3://BUCKET} and the key prefix in S3, else the location's scheme and authority and its path.
     */
    static Dataset atLocation(String location) {
        java.net.URI uri;
        try {
            uri = java.net.URI.create(location);
        } catch (IllegalArgumentException e) {
            uri = null;
        }
        if (uri == null || uri.getScheme() == null || uri.getScheme().length() == 1) {
            return new Dataset("file", java.nio.file.Path.of(location).toAbsolutePath().normalize().toString());
        }
        String scheme = uri.getScheme().equals("s3a") || uri.getScheme().equals("s3n") ? "s3" : uri.getScheme();
        if (scheme.equals("file")) {
            return new Dataset("file", uri.getPath());
        }
        String path = uri.getPath() == null ? "" : uri.getPath().replaceFirst("^/", "");
        return new Dataset(scheme + "://" + uri.getAuthority(), path);
    }

    /**
     * @throws SinkConfigException for a URL or settings this kind of sink cannot use
     */
    Sink create(SinkSettings settings);

    /**
     * Only the store of the destination's jobs, for a command that administers them ({@code status}, {@code reset},
     * {@code jobs}): nothing of the writer is built. Open it with {@link JobStore#openForJobs()}; closing it closes
     * what it opened.
     *
     * @throws SinkConfigException for a URL or settings this kind of sink cannot use
     */
    JobStore createJobStore(SinkSettings settings);

    /**
     * How the Spark engine writes a target of this kind, or why it cannot: the engine asks this, and never looks at
     * the kind.
     */
    default OnSpark onSpark(SinkTarget target) {
        return new OnSpark.Refused("--engine spark does not write " + scheme() + ": sinks yet: run it with "
                + "--engine local");
    }

    /** How the Spark engine writes a target ({@link #onSpark}). */
    sealed interface OnSpark {
        /**
         * Per-partition sub-jobs in the executors, each a local run of its partitions committing their progress with
         * their rows.
         *
         * @param defaultConnections the most writers at once unless {@code --spark-max-connections} says
         */
        record PartitionTasks(int defaultConnections) implements OnSpark {
        }

        /** One Delta MERGE per wave by Spark's own Delta support, into the table at {@code location}. */
        record DeltaMerge(String location) implements OnSpark {
        }

        /** Not on Spark: {@code reason} says why and what to run instead (one line, exit 2). */
        record Refused(String reason) implements OnSpark {
        }
    }

    /** What {@code kbackfill compact} is asked: the key columns a Delta table sorts by, rows per written file. */
    record Compaction(Optional<List<String>> keyColumns, int rowsPerFile) {
    }

    /**
     * The shadow and the atomic publish of a rebuild into {@code settings}' target ({@code --publish-after-verify}).
     * By default a sink kind has none: refused as bad input, before anything is read or written.
     *
     * @throws SinkConfigException where the kind cannot publish a shadow atomically, saying why
     */
    default Publication publication(SinkSettings settings) {
        throw new SinkConfigException("--publish-after-verify is not available for --sink " + scheme() + ":...: it "
                + "has no step that puts a verified shadow in the target's place atomically");
    }

    /**
     * Compacts the destination ({@link Capability#COMPACTS}) and says what it did, in one line.
     *
     * @throws SinkConfigException where the kind has nothing to compact: the message says what compact does for it
     */
    default String compact(SinkSettings settings, Compaction compaction) {
        throw new SinkConfigException("invalid --sink '" + redact(settings.url()) + "': compact rewrites the files of "
                + "lake tables (" + String.join(", ", formsWith(Capability.COMPACTS)) + "); a " + scheme()
                + ": sink has none");
    }

    /** The sink for the settings' URL among the factories on the classpath. */
    static Sink forSettings(SinkSettings settings) {
        return factoryFor(settings.url()).create(settings);
    }

    /** Every kind of sink on the classpath, by scheme (whatever the order of the classpath). */
    static List<SinkFactory> all() {
        return Kinds.All.KINDS;
    }

    /**
     * The kinds on the classpath. Those kbackfill ships are found by their class names, once each: reading every
     * jar's services files opens each jar of the class path (50-70 ms of a one-second cron run with the command
     * line's 180), so that scan waits until a URL of no shipped kind, or a list of every kind (a message naming the
     * forms), needs it. The scan finds every kind once ({@link All}): a command asks several questions of its sink's kind (each
     * option's capability, the factory, the engine).
     */
    final class Kinds {
        /** The kinds kbackfill ships, by scheme: each module's services file names the same class. */
        public static final Map<String, String> SHIPPED = Map.of(
                "delta", "dev.kbackfill.sink.delta.DeltaSinkFactory",
                "iceberg", "dev.kbackfill.sink.iceberg.IcebergSinkFactory",
                "jdbc", "dev.kbackfill.sink.jdbc.JdbcSinkFactory",
                "kafka", "dev.kbackfill.sink.kafka.KafkaSinkFactory");
        private static final Map<String, Optional<SinkFactory>> SHIPPED_FOUND = new ConcurrentHashMap<>();

        private Kinds() {
        }

        /** The shipped kind of the URL's scheme, if the URL has the scheme of one and its module is present. */
        static Optional<SinkFactory> shipped(String url) {
            int colon = url == null ? -1 : url.indexOf(':');
            String className = colon < 0 ? null : SHIPPED.get(url.substring(0, colon));
            if (className == null) {
                return Optional.empty();
            }
            return SHIPPED_FOUND.computeIfAbsent(className, Kinds::load).filter(f -> f.accepts(url));
        }

        private static Optional<SinkFactory> load(String className) {
            // the command line starts a command for a database or Kafka without the lake sinks' libraries
            return dev.kbackfill.resolver.OptionalLibraries.orAdded(() -> make(className));
        }

        private static Optional<SinkFactory> make(String className) {
            ClassLoader loader = Thread.currentThread().getContextClassLoader(); // as ServiceLoader.load looks
            try {
                Class<?> type = Class.forName(className, true, loader == null ? SinkFactory.class.getClassLoader() : loader);
                return Optional.of((SinkFactory) type.getConstructor().newInstance());
            } catch (ClassNotFoundException e) {
                return Optional.empty(); // its module is not on the classpath: the scan says what is
            } catch (ReflectiveOperationException | ClassCastException e) {
                throw new IllegalStateException("cannot make the sink kind " + className + ": " + e, e);
            }
        }

        /** Every kind, found by the services scan; the shipped ones already made are the same objects. */
        static final class All {
            static final List<SinkFactory> KINDS = every();

            private All() {
            }

            private static List<SinkFactory> every() {
                try {
                    dev.kbackfill.resolver.OptionalLibraries.add();
                } catch (RuntimeException e) {
                    // a list of the kinds there are: without those libraries, the ones on the class path
                }
                return ServiceLoader.load(SinkFactory.class).stream()
                        .map(p -> SHIPPED.containsValue(p.type().getName())
                                ? SHIPPED_FOUND.computeIfAbsent(p.type().getName(), n -> Optional.of(p.get()))
                                        .orElseGet(p::get)
                                : p.get())
                        .sorted(java.util.Comparator.comparing(SinkFactory::scheme)).toList();
            }
        }
    }

    /**
     * The kind of sink that accepts {@code url}, if any on the classpath does: a shipped kind of the URL's scheme
     * first, then every kind in order of scheme.
     */
    static Optional<SinkFactory> of(String url) {
        Optional<SinkFactory> shipped = Kinds.shipped(url);
        return shipped.isPresent() ? shipped : all().stream().filter(f -> f.accepts(url)).findFirst();
    }

    /** Whether sinks at {@code url} can do {@code capability} (false for a URL no kind accepts). */
    static boolean can(String url, Capability capability) {
        return of(url).map(f -> f.capabilities().contains(capability)).orElse(false);
    }

    /**
     * The short forms of the kinds that can do {@code capability}, by scheme, for messages: {@code delta:...},
     * {@code iceberg:...}.
     */
    static List<String> formsWith(Capability capability) {
        return all().stream().filter(f -> f.capabilities().contains(capability)).map(SinkFactory::shortForm).toList();
    }

    /** Forms in a sentence: {@code a}, {@code a and b}, {@code a, b and c}. */
    static String listed(List<String> forms) {
        if (forms.size() < 2) {
            return String.join("", forms);
        }
        return String.join(", ", forms.subList(0, forms.size() - 1)) + " and " + forms.get(forms.size() - 1);
    }

    /**
     * The factory on the classpath that accepts {@code url}.
     *
     * @throws SinkConfigException for a URL no kind accepts, naming the forms that are
     */
    static SinkFactory factoryFor(String url) {
        Optional<SinkFactory> found = of(url);
        if (found.isPresent()) {
            return found.get();
        }
        List<SinkFactory> factories = all();
        throw new SinkConfigException("invalid --sink '" + (url == null ? "" : redact(url)) + "': expected "
                + factories.stream().flatMap(f -> f.forms().stream()).collect(Collectors.joining(", ")));
    }

    /**
     * The store of the settings' destination's jobs, for a command that only administers them ({@code status},
     * {@code reset}, {@code jobs}): open it with {@link JobStore#openForJobs()}.
     */
    static JobStore jobStore(SinkSettings settings) {
        return factoryFor(settings.url()).createJobStore(settings);
    }

    /**
     * The URL as one destination has one form of it, for job names and messages: query parameters in order of name
     * ({@code ?user=a&password=b} and {@code ?password=b&user=a} are one sink), passwords masked.
     */
    static String canonical(String url) {
        return redact(sortParameters(url));
    }

    private static String sortParameters(String url) {
        int q = url.indexOf('?');
        if (q < 0) {
            return url;
        }
        String query = url.substring(q + 1);
        String fragment = "";
        int hash = query.indexOf('#');
        if (hash >= 0) {
            fragment = query.substring(hash);
            query = query.substring(0, hash);
        }
        java.util.List<String> params = new java.util.ArrayList<>(java.util.List.of(query.split("&")));
        params.removeIf(String::isEmpty);
        params.sort(java.util.Comparator.comparing((String p) -> p.contains("=") ? p.substring(0, p.indexOf('=')) : p)
                .thenComparing(java.util.Comparator.naturalOrder()));
        return url.substring(0, q) + (params.isEmpty() ? "" : "?" + String.join("&", params)) + fragment;
    }

    /** The URL without a password: {@code user:secret@} and {@code password=} values are masked. */
    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***").replaceAll("(//[^/:@]+:)[^@/]*@", "$1***@");
    }
}
