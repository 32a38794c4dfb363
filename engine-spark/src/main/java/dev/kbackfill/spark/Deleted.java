package dev.kbackfill.spark;

import java.io.Serializable;

import dev.kbackfill.core.version.Version;

/** A ledger entry as executors get it. */
record Deleted(String topic, int partition, long offset, long timestamp, long logTime, Serializable field)
        implements Serializable {
    static Deleted of(Version v) {
        return new Deleted(v.topic(), v.partition(), v.offset(), v.timestamp(), v.logTime(), (Serializable) v.field());
    }

    Version version() {
        return new Version(topic, partition, offset, timestamp, logTime, (Comparable<?>) field);
    }
}
