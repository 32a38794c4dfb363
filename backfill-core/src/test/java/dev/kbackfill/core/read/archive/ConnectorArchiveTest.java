package dev.kbackfill.core.read.archive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.kbackfill.resolver.Archive;
import dev.kbackfill.resolver.RequestException;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An archive read file by file: what each layout gives, and what the index refuses. */
class ConnectorArchiveTest {

    @TempDir
    Path root;

    private static final Schema ORDER = SchemaBuilder.record("Order").fields().requiredString("id")
            .requiredInt("n").endRecord();

    /** Confluent's Avro format: container files of values, keys in a container file of strings beside each. */
    private void confluentAvro(int partition, long start, int count) throws IOException {
        Path dir = Files.createDirectories(root.resolve("topics/orders/partition=" + partition));
        String stem = String.format("orders+%d+%010d", partition, start);
        try (DataFileWriter<GenericRecord> values = new DataFileWriter<>(new GenericDatumWriter<>(ORDER));
             DataFileWriter<Object> keys = new DataFileWriter<>(new GenericDatumWriter<>(Schema.create(Schema.Type.STRING)))) {
            values.create(ORDER, dir.resolve(stem + ".avro").toFile());
            keys.create(Schema.create(Schema.Type.STRING), dir.resolve(stem + ".keys.avro").toFile());
            for (int i = 0; i < count; i++) {
                GenericRecord r = new GenericData.Record(ORDER);
                r.put("id", "o" + (start + i));
                r.put("n", (int) (start + i));
                values.append(r);
                keys.append("o" + (start + i));
            }
        }
    }

    private List<ArchivedRecord> all(ConnectorArchive archive, int partition) {
        List<ArchivedRecord> read = new ArrayList<>();
        archive.read("orders", partition, 0, Long.MAX_VALUE, read::add);
        return read;
    }

    @Test
    void confluentsAvroFilesGiveKeysValuesAsJsonAndOffsetsInferredFromTheirNames() throws IOException {
        confluentAvro(0, 0, 3);
        confluentAvro(0, 3, 2);
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        Archive.Extent e = archive.extents("orders", Set.of(0, 1)).get(0);
        assertThat(e).isEqualTo(new Archive.Extent(0, 5, 5, 2, false, false));
        assertThat(archive.layout()).isEqualTo("Confluent S3 sink, avro");
        List<ArchivedRecord> read = all(archive, 0);
        assertThat(read).extracting(ArchivedRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(new String(read.get(4).key(), StandardCharsets.UTF_8)).isEqualTo("o4");
        assertThat(new String(read.get(4).value(), StandardCharsets.UTF_8)).isEqualTo("{\"id\": \"o4\", \"n\": 4}");
        assertThat(read.get(4).timestamp()).isEqualTo(-1);
    }

    @Test
    void aivenJsonlWithoutTheOffsetFieldInfersOffsetsAndReadsTimesForLookups() throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            lines.append("{\"key\":\"k").append(i).append("\",\"value\":{\"n\":").append(i)
                    .append("},\"timestamp\":\"").append(Instant.ofEpochSecond(100 + 10L * i)).append("\"}\n");
        }
        Files.writeString(root.resolve("orders-2-10"), lines);
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        assertThat(archive.extents("orders", Set.of(2)).get(2)).isEqualTo(new Archive.Extent(10, 14, 4, 1, false, true));
        assertThat(archive.firstAtOrAfter("orders", 2, Instant.ofEpochSecond(115), 14).orElseThrow().offset())
                .isEqualTo(12);
        assertThat(archive.firstAtOrAfter("orders", 2, Instant.ofEpochSecond(115), 12)).isEmpty();
        assertThat(archive.timeBefore("orders", 2, 12, Long.MIN_VALUE)).isEqualTo(110_000);
        assertThat(all(archive, 2).get(0).value()).isEqualTo("{\"n\":0}".getBytes(StandardCharsets.UTF_8));
        assertThat(new String(all(archive, 2).get(0).key(), StandardCharsets.UTF_8)).isEqualTo("k0");
    }

    @Test
    void aFileThatIsNotJsonIsRefusedNamingItsLine() throws IOException {
        Files.writeString(root.resolve("orders-0-0"), "{\"offset\":0,\"value\":1}\n{not json\n");
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        assertThatThrownBy(() -> archive.partitions("orders")).isInstanceOf(RequestException.class)
                .hasMessage("archive file orders-0-0 line 2 is not JSON");
    }

    @Test
    void aFolderThatDoesNotExistIsRefused() {
        assertThatThrownBy(() -> ConnectorArchive.open(root.resolve("nope").toString(), Map.of()))
                .isInstanceOf(RequestException.class).hasMessageContaining("no such folder");
    }
}
