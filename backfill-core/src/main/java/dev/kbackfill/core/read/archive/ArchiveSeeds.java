package dev.kbackfill.core.read.archive;

import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.DecodeException;
import dev.kbackfill.core.record.FieldClock;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.record.SourceRecord;
import dev.kbackfill.core.version.VersionField;

/**
 * A tombstone's version field where the records before it were archived: the topic's records are asked first (they
 * are the newer), then the archive's, over the same reach. A run that starts (or resumes) inside the archived part
 * gives a tombstone the field a run over the whole topic would.
 */
public final class ArchiveSeeds implements FieldClock.Seeds {

    private final FieldClock.Seeds topic;
    private final ConnectorArchive archive;
    private final String name;
    private final RecordDecoder decoder;

    public ArchiveSeeds(FieldClock.Seeds topic, ConnectorArchive archive, String name, RecordDecoder decoder) {
        this.topic = topic;
        this.archive = archive;
        this.name = name;
        this.decoder = decoder;
    }

    @Override
    public Optional<Map.Entry<Long, Comparable<?>>> before(int partition, long offset) {
        Optional<Map.Entry<Long, Comparable<?>>> inTopic = topic.before(partition, offset);
        if (inTopic.isPresent()) {
            return inTopic;
        }
        @SuppressWarnings("unchecked")
        Map.Entry<Long, Comparable<?>>[] found = new Map.Entry[1];
        archive.read(name, partition, Math.max(0, offset - VersionField.TOMBSTONE_REACH), offset, r -> {
            if (r.value() == null) {
                return true;
            }
            try {
                Comparable<?> field = decoder.decode(new SourceRecord(name, partition, r.offset(), r.timestamp(),
                        r.key(), r.value(), r.headers())).versionField();
                if (field != null) {
                    found[0] = Map.entry(r.offset(), field);
                }
            } catch (DecodeException e) {
                // a poison record carries no field
            }
            return true;
        });
        return Optional.ofNullable(found[0]);
    }
}
