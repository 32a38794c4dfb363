package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.kbackfill.core.read.archive.ArchivedRecord;
import dev.kbackfill.core.read.archive.ConnectorArchive;
import dev.kbackfill.resolver.Archive;
import dev.kbackfill.resolver.RequestException;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.parquet.avro.AvroParquetWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Archives in Parquet, written with parquet-mr's Avro writer as both connectors write them, read back through the
 * archive's index: Confluent's values, enveloped keys and headers files; Aiven's envelope of the configured fields.
 */
class ParquetArchiveTest {

    @TempDir
    Path root;

    private static final Schema ORDER = SchemaBuilder.record("Order").fields().requiredString("id")
            .requiredInt("n").endRecord();
    private static final Schema KEY = SchemaBuilder.record("RecordKey").fields().requiredString("key").endRecord();
    private static final Schema HEADER = SchemaBuilder.record("Header").fields().requiredString("key")
            .optionalString("value").endRecord();
    private static final Schema HEADERS = SchemaBuilder.record("RecordHeaders").fields().name("headers").type()
            .array().items(HEADER).noDefault().endRecord();
    private static final Schema AIVEN = SchemaBuilder.record("connector_records")
            .namespace("io.aiven.parquet.output.schema").fields()
            .name("key").type().stringType().noDefault()
            .name("value").type(ORDER).noDefault()
            .name("offset").type().longType().noDefault()
            .name("timestamp").type().longType().noDefault()
            .name("headers").type().map().values().stringType().noDefault().endRecord();

    private static void write(Path file, Schema schema, List<GenericRecord> rows) throws IOException {
        try (ParquetWriter<GenericRecord> w = AvroParquetWriter.<GenericRecord>builder(new LocalOutputFile(file))
                .withSchema(schema).withCompressionCodec(CompressionCodecName.SNAPPY).build()) {
            for (GenericRecord r : rows) {
                w.write(r);
            }
        }
    }

    private static GenericRecord order(int n) {
        GenericRecord order = new GenericData.Record(ORDER);
        order.put("id", "o" + n);
        order.put("n", n);
        return order;
    }

    private static List<ArchivedRecord> all(ConnectorArchive archive, int partition) {
        List<ArchivedRecord> read = new ArrayList<>();
        archive.read("orders", partition, 0, Long.MAX_VALUE, read::add);
        return read;
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void confluentsParquetGivesValuesAsJsonTheirEnvelopedKeysAndHeaders() throws IOException {
        Path dir = Files.createDirectories(root.resolve("topics/orders/partition=0"));
        for (int start : new int[] {0, 3}) {
            String stem = String.format("orders+0+%010d", start);
            List<GenericRecord> values = new ArrayList<>();
            List<GenericRecord> keys = new ArrayList<>();
            List<GenericRecord> headers = new ArrayList<>();
            for (int n = start; n < start + 3; n++) {
                values.add(order(n));
                GenericRecord key = new GenericData.Record(KEY);
                key.put("key", "k" + n);
                keys.add(key);
                GenericRecord header = new GenericData.Record(HEADER);
                header.put("key", "source");
                header.put("value", "s" + n);
                GenericRecord hs = new GenericData.Record(HEADERS);
                hs.put("headers", List.of(header));
                headers.add(hs);
            }
            write(dir.resolve(stem + ".snappy.parquet"), ORDER, values);
            write(dir.resolve(stem + ".keys.snappy.parquet"), KEY, keys);
            write(dir.resolve(stem + ".headers.snappy.parquet"), HEADERS, headers);
        }
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        assertThat(archive.extents("orders", Set.of(0)).get(0)).isEqualTo(new Archive.Extent(0, 6, 6, 2, false, false));
        assertThat(archive.layout()).isEqualTo("Confluent S3 sink, parquet, headers");
        List<ArchivedRecord> read = all(archive, 0);
        assertThat(read).extracting(ArchivedRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        ArchivedRecord r = read.get(4);
        assertThat(text(r.key())).isEqualTo("k4");
        assertThat(text(r.value())).isEqualTo("{\"id\": \"o4\", \"n\": 4}");
        assertThat(text(r.headers().lastHeader("source").value())).isEqualTo("s4");
    }

    @Test
    void aivensParquetEnvelopeGivesExactOffsetsTimesAndHeadersWhateverItsNamesCompressionExtension() throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        for (int n = 0; n < 4; n++) {
            GenericRecord r = new GenericData.Record(AIVEN);
            r.put("key", "k" + n);
            r.put("value", order(n));
            r.put("offset", 20L + n);
            r.put("timestamp", 1_000L * n);
            r.put("headers", Map.of("source", "s" + n));
            rows.add(r);
        }
        // the default file name template adds the compression type's extension even where Parquet compresses inside
        write(root.resolve("orders-1-00000000000000000020.gz"), AIVEN, rows);
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        assertThat(archive.extents("orders", Set.of(1)).get(1)).isEqualTo(new Archive.Extent(20, 24, 4, 1, true, true));
        assertThat(archive.layout()).isEqualTo("Aiven S3 sink, parquet");
        ArchivedRecord r = all(archive, 1).get(3);
        assertThat(r.offset()).isEqualTo(23);
        assertThat(r.timestamp()).isEqualTo(3_000);
        assertThat(text(r.key())).isEqualTo("k3");
        assertThat(text(r.value())).isEqualTo("{\"id\": \"o3\", \"n\": 3}");
        assertThat(text(r.headers().lastHeader("source").value())).isEqualTo("s3");
    }

    @Test
    void aFileNamedParquetThatIsNotIsRefusedNamingIt() throws IOException {
        Path dir = Files.createDirectories(root.resolve("topics/orders/partition=0"));
        Files.writeString(dir.resolve("orders+0+0000000000.parquet"), "PAR1 and then nothing");
        ConnectorArchive archive = ConnectorArchive.open(root.toString(), Map.of());
        assertThatThrownBy(() -> archive.partitions("orders")).isInstanceOf(RequestException.class)
                .hasMessageStartingWith("archive file topics/orders/partition=0/orders+0+0000000000.parquet cannot be "
                        + "read as Parquet");
    }
}
