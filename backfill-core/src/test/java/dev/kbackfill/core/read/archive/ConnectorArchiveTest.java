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

    /** Aiven's envelope as its Avro and Parquet writers build it: the configured fields, headers a map. */
    static final Schema AIVEN = SchemaBuilder.record("connector_records").namespace("io.aiven.avro.output.schema")
            .fields().name("key").type().stringType().noDefault()
            .name("value").type(ORDER).noDefault()
            .name("offset").type().longType().noDefault()
            .name("timestamp").type().longType().noDefault()
            .name("headers").type().map().values().stringType().noDefault().endRecord();

    @Test
    void aivensAvroEnvelopeGivesExactOffsetsTimesKeysValuesAndHeadersThroughItsCompression() throws IOException {
        for (String compression : List.of("", ".zst", ".snappy", ".gz")) {
            Path dir = Files.createDirectories(root.resolve("c" + compression.replace(".", "")));
            long start = 100;
            Path file = dir.resolve("orders-0-" + String.format("%020d", start) + ".avro" + compression);
            try (java.io.OutputStream out = compressed(file, compression);
                 DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<>(AIVEN))) {
                w.create(AIVEN, out);
                for (int i = 0; i < 3; i++) {
                    GenericRecord order = new GenericData.Record(ORDER);
                    order.put("id", "o" + i);
                    order.put("n", i);
                    GenericRecord r = new GenericData.Record(AIVEN);
                    r.put("key", "k" + i);
                    r.put("value", order);
                    r.put("offset", start + 2L * i); // a compacted log: offsets with gaps, exact
                    r.put("timestamp", 1_000L * i);
                    r.put("headers", Map.of("source", "s" + i));
                    w.append(r);
                }
            }
            ConnectorArchive archive = ConnectorArchive.open(dir.toString(), Map.of());
            archive.partitions("orders");
            assertThat(archive.layout()).isEqualTo("Aiven S3 sink, avro");
            assertThat(archive.extents("orders", Set.of(0)).get(0)).isEqualTo(new Archive.Extent(100, 105, 3, 1, true,
                    true));
            List<ArchivedRecord> read = all(archive, 0);
            assertThat(read).extracting(ArchivedRecord::offset).containsExactly(100L, 102L, 104L);
            ArchivedRecord last = read.get(2);
            assertThat(new String(last.key(), StandardCharsets.UTF_8)).isEqualTo("k2");
            assertThat(new String(last.value(), StandardCharsets.UTF_8)).isEqualTo("{\"id\": \"o2\", \"n\": 2}");
            assertThat(last.timestamp()).isEqualTo(2_000);
            assertThat(new String(last.headers().lastHeader("source").value(), StandardCharsets.UTF_8)).isEqualTo("s2");
        }
    }

    private static java.io.OutputStream compressed(Path file, String compression) throws IOException {
        java.io.OutputStream out = Files.newOutputStream(file);
        return switch (compression) {
            case ".gz" -> new java.util.zip.GZIPOutputStream(out);
            case ".snappy" -> new org.xerial.snappy.SnappyOutputStream(out);
            case ".zst" -> new com.github.luben.zstd.ZstdOutputStream(out);
            default -> out;
        };
    }

    @Test
    void aivensAvroWithoutTheEnvelopeIsBareValuesWithOffsetsInferred() throws IOException {
        try (DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<>(ORDER))) {
            w.create(ORDER, root.resolve("orders-1-7.avro").toFile());
            GenericRecord order = new GenericData.Record(ORDER);
            order.put("id", "o7");
            order.put("n", 7);
            w.append(order);
        }
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        ArchivedRecord r = all(archive, 1).get(0);
        assertThat(r.offset()).isEqualTo(7);
        assertThat(r.exact()).isFalse();
        assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"id\": \"o7\", \"n\": 7}");
    }

    private static String b64(String text) {
        return java.util.Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aivensCsvIsReadInTheFieldOrderGivenAndRefusedWithoutIt() throws IOException {
        String csv = b64("k1") + "," + b64("{\"n\":1}") + ",41,1700000000000," + b64("source") + ":" + b64("s1")
                + ";\n" + b64("k2") + ",,42,1700000001000,\n";
        try (java.io.OutputStream out = compressed(root.resolve("orders-0-41.gz"), ".gz")) {
            out.write(csv.getBytes(StandardCharsets.UTF_8));
        }
        ConnectorArchive unnamed = ConnectorArchive.open(root.toString(), Map.of());
        assertThatThrownBy(() -> unnamed.partitions("orders")).isInstanceOf(RequestException.class)
                .hasMessageContaining("archive file orders-0-41.gz is in Aiven's CSV format, whose lines do not name "
                        + "their fields");
        ConnectorArchive archive = ConnectorArchive.open(root.toString(),
                Map.of("archive.fields", "key,value,offset,timestamp,headers"));
        archive.partitions("orders");
        assertThat(archive.layout()).isEqualTo("Aiven S3 sink, csv");
        List<ArchivedRecord> read = all(archive, 0);
        assertThat(read).extracting(ArchivedRecord::offset).containsExactly(41L, 42L);
        assertThat(new String(read.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("{\"n\":1}");
        assertThat(new String(read.get(0).headers().lastHeader("source").value(), StandardCharsets.UTF_8))
                .isEqualTo("s1");
        assertThat(read.get(1).value()).as("a tombstone").isNull();
        assertThat(read.get(1).timestamp()).isEqualTo(1_700_000_001_000L);

        ConnectorArchive wrongOrder = ConnectorArchive.open(root.toString(), Map.of("archive.fields", "key,value"));
        assertThatThrownBy(() -> wrongOrder.partitions("orders")).isInstanceOf(RequestException.class)
                .hasMessage("archive file orders-0-41.gz line 1 has 5 field(s) where the archive's fields are "
                        + "key,value (2)");
    }

    @Test
    void confluentsHeadersFilesGiveEachRecordItsHeadersAndAMissingOneIsRefused() throws IOException {
        Path dir = Files.createDirectories(root.resolve("topics/orders/partition=0"));
        Files.writeString(dir.resolve("orders+0+0000000000.json"), "{\"n\":0}\n{\"n\":1}\n");
        Files.writeString(dir.resolve("orders+0+0000000000.headers.json"),
                "{\"headers\":[{\"key\":\"source\",\"value\":\"a\"}]}\n{\"headers\":[]}\n");
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        archive.partitions("orders");
        assertThat(archive.layout()).isEqualTo("Confluent S3 sink, json, no keys, headers");
        List<ArchivedRecord> read = all(archive, 0);
        assertThat(new String(read.get(0).headers().lastHeader("source").value(), StandardCharsets.UTF_8))
                .isEqualTo("a");
        assertThat(read.get(1).headers().toArray()).isEmpty();

        Files.writeString(dir.resolve("orders+0+0000000002.json"), "{\"n\":2}\n");
        ConnectorArchive missing = ConnectorArchive.open(root.toString(), Map.of());
        assertThatThrownBy(() -> missing.partitions("orders")).isInstanceOf(RequestException.class)
                .hasMessageContaining("orders+0+0000000002.json has no headers file");
    }

    @Test
    void aivensJsonlWithoutTheEnvelopeIsBareValuesWithOffsetsInferred() throws IOException {
        Files.writeString(root.resolve("orders-0-5"), "{\"order_id\":\"o5\",\"value\":3}\n\"text\"\n");
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        List<ArchivedRecord> read = all(archive, 0);
        assertThat(read).extracting(ArchivedRecord::offset).containsExactly(5L, 6L);
        assertThat(read).extracting(ArchivedRecord::exact).containsOnly(false);
        assertThat(new String(read.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("{\"order_id\":\"o5\",\"value\":3}");
        assertThat(new String(read.get(1).value(), StandardCharsets.UTF_8)).isEqualTo("text");
        assertThat(read.get(0).key()).isNull();
    }

    @Test
    void aivensJsonlOfBareValuesThatAreNotObjectsIsJsonlNotCsv() throws IOException {
        Files.writeString(root.resolve("orders-0-7"), "\"text\"\n42\n[1,2]\n");
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        archive.partitions("orders");
        assertThat(archive.layout()).isEqualTo("Aiven S3 sink, jsonl");
        List<ArchivedRecord> read = all(archive, 0);
        assertThat(read).extracting(ArchivedRecord::offset).containsExactly(7L, 8L, 9L);
        assertThat(read).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("text", "42", "[1,2]");
        // a CSV line is not one JSON value: still CSV, and refused without its fields
        Files.writeString(root.resolve("orders-1-0"), b64("k") + "," + b64("v") + ",0,1700000000000\n");
        ConnectorArchive csv = ConnectorArchive.open(root.toString(), Map.of());
        assertThatThrownBy(() -> csv.partitions("orders")).isInstanceOf(RequestException.class)
                .hasMessageContaining("archive file orders-1-0 is in Aiven's CSV format");
    }
}
