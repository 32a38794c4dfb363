package dev.kbackfill.embedded;

/**
 * One {@link EmbeddedKafka} per JVM, started on first use and stopped when the JVM exits.
 *
 * <p>A cold broker start costs 6-13 s, so test classes share this one instead of starting their own. Tests
 * that share it must use topic names of their own (for example with a class-specific prefix).
 */
public final class SharedKafka {

    private static EmbeddedKafka instance;

    private SharedKafka() {
    }

    /** The shared broker, starting it on the first call. */
    public static synchronized EmbeddedKafka get() {
        if (instance == null) {
            EmbeddedKafka started = EmbeddedKafka.start();
            Runtime.getRuntime().addShutdownHook(new Thread(started::close, "shared-kafka-shutdown"));
            instance = started;
        }
        return instance;
    }
}
