package dev.kbackfill.core.sink;

import java.util.Optional;

/**
 * A {@code --sink} URL by its kind, with the part after the kind's prefix: the one place that tells the kinds apart by
 * their prefixes. A sink module's factory accepts the URLs of its kind; the command line, the job and the engines
 * ask the kind of this value instead of looking at the text. What each part means (a JDBC driver's URL, a Delta
 * table's location, an Iceberg table reference, a topic) is the sink module's to parse further.
 */
public sealed interface SinkUrl {

    /** The URL as given. */
    String url();

    /** A database table's JDBC URL, e.g. {@code jdbc:postgresql://db/app}. */
    record Jdbc(String url) implements SinkUrl {
        /** The driver's kind: {@code postgresql}, {@code mariadb}, {@code sqlite}, ... (what follows {@code jdbc:}). */
        public String driver() {
            String rest = url.substring(PREFIX.length());
            int colon = rest.indexOf(':');
            return colon < 0 ? rest : rest.substring(0, colon);
        }

        static final String PREFIX = "jdbc:";
    }

    /** A Delta table: {@code delta:LOCATION}, a path or a {@code file:}/{@code s3a:} URI. */
    record Delta(String url, String location) implements SinkUrl {
        static final String PREFIX = "delta:";
    }

    /** An Iceberg table: {@code iceberg:REFERENCE}, a location or a catalog's table. */
    record Iceberg(String url, String reference) implements SinkUrl {
        static final String PREFIX = "iceberg:";
    }

    /** A compacted topic: {@code kafka:TOPIC}. */
    record Kafka(String url, String topic) implements SinkUrl {
        static final String PREFIX = "kafka:";
    }

    /** The URL's kind, or empty when it has none of the kinds' prefixes. */
    static Optional<SinkUrl> parse(String url) {
        if (url == null) {
            return Optional.empty();
        }
        if (url.startsWith(Jdbc.PREFIX)) {
            return Optional.of(new Jdbc(url));
        } else if (url.startsWith(Delta.PREFIX)) {
            return Optional.of(new Delta(url, url.substring(Delta.PREFIX.length())));
        } else if (url.startsWith(Iceberg.PREFIX)) {
            return Optional.of(new Iceberg(url, url.substring(Iceberg.PREFIX.length())));
        } else if (url.startsWith(Kafka.PREFIX)) {
            return Optional.of(new Kafka(url, url.substring(Kafka.PREFIX.length())));
        }
        return Optional.empty();
    }

    /** Whether the URL is of this kind ({@code SinkUrl.is(url, SinkUrl.Delta.class)}). */
    static boolean is(String url, Class<? extends SinkUrl> kind) {
        return parse(url).filter(kind::isInstance).isPresent();
    }

    /** Whether the URL names a lake table (Delta or Iceberg), whose filesystem or catalog takes settings. */
    static boolean isLake(String url) {
        return parse(url).filter(u -> u instanceof Delta || u instanceof Iceberg).isPresent();
    }
}
