package dev.kbackfill.core.read.archive;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.record.FieldClock;
import dev.kbackfill.core.record.Format;
import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.version.VersionField;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A tombstone's version field found in the archive where the records before it are no longer in the topic. */
class ArchiveSeedsTest {

    @TempDir
    Path root;

    private final RecordDecoder decoder = new RecordDecoder(Format.STRING, Format.JSON, "kafka_key", "value",
            List.of(), null, VersionField.parse("lsn"));

    @Test
    void theTopicsNearerRecordWinsElseTheArchivesLastWithTheFieldBelowTheOffset() throws Exception {
        // offsets 10-13: 12 carries no field, 13 is a tombstone; an undecodable line is no field either
        Files.writeString(root.resolve("orders-0-10"), """
                {"offset":10,"key":"a","value":{"lsn":5}}
                {"offset":11,"key":"a","value":{"lsn":7}}
                {"offset":12,"key":"a","value":{"other":1}}
                {"offset":13,"key":"a","value":null}
                {"offset":14,"key":"a","value":"not json {"}
                """);
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        ArchiveSeeds seeds = new ArchiveSeeds(FieldClock.Seeds.NONE, archive, "orders", decoder);
        assertThat(seeds.before(0, 15)).contains(Map.entry(11L, (Comparable<?>) 7L));
        assertThat(seeds.before(0, 11)).contains(Map.entry(10L, (Comparable<?>) 5L));
        assertThat(seeds.before(0, 10)).isEmpty();

        FieldClock.Seeds topic = (p, o) -> Optional.of(Map.entry(o - 1, (Comparable<?>) 99L));
        assertThat(new ArchiveSeeds(topic, archive, "orders", decoder).before(0, 15))
                .contains(Map.entry(14L, (Comparable<?>) 99L));
    }
}
