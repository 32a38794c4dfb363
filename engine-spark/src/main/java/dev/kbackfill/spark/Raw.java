package dev.kbackfill.spark;

import java.io.Serializable;

import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.version.Version;

/** A record on its way to reduction, as Spark ships it: coordinates and raw bytes. */
final class Raw implements Serializable {
    private static final long serialVersionUID = 1L;
    final String topic;
    final int partition;
    final long offset;
    final long timestamp;
    final long logTime;
    final byte[] key;
    final byte[] value;
    final String[] headerKeys;
    final byte[][] headerValues;
    /** The version field's value ({@code --version-field}; a tombstone's from its partition's clock), or null. */
    final Comparable<?> field;

    Raw(SourceRecord r) {
        this(r, null);
    }

    Raw(SourceRecord r, Comparable<?> field) {
        this.field = field;
        this.topic = r.topic();
        this.partition = r.partition();
        this.offset = r.offset();
        this.timestamp = r.timestamp();
        this.logTime = r.logTime();
        this.key = r.key();
        this.value = r.value();
        org.apache.kafka.common.header.Header[] headers = r.headers() == null ? new org.apache.kafka.common.header.Header[0]
                : r.headers().toArray();
        this.headerKeys = new String[headers.length];
        this.headerValues = new byte[headers.length][];
        for (int i = 0; i < headers.length; i++) {
            headerKeys[i] = headers[i].key();
            headerValues[i] = headers[i].value();
        }
    }

    SourceRecord record() {
        org.apache.kafka.common.header.internals.RecordHeaders headers = new org.apache.kafka.common.header.internals.RecordHeaders();
        for (int i = 0; i < headerKeys.length; i++) {
            headers.add(headerKeys[i], headerValues[i]);
        }
        return new SourceRecord(topic, partition, offset, timestamp, logTime, key, value, headers);
    }

    Version version() {
        return new Version(topic, partition, offset, timestamp, logTime, field);
    }

    /** The newer of two records of a key, by the one version rule. */
    static Raw newer(Raw a, Raw b) {
        return Version.compare(a.version(), b.version()) >= 0 ? a : b;
    }
}
