package dev.kbackfill.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The probe's three readers find the same rows with the same values: random tables of every column type kbackfill
 * writes, nulls, many small row groups and pages, position deletes at random, single and composite keys of several
 * types, random batches of keys (some in the table, some not).
 */
class ColumnarProbeTest {

    private static final Schema SCHEMA = new Schema(
            Types.NestedField.optional(1, "s", Types.StringType.get()),
            Types.NestedField.optional(2, "l", Types.LongType.get()),
            Types.NestedField.optional(3, "i", Types.IntegerType.get()),
            Types.NestedField.optional(4, "ts", Types.TimestampType.withZone()),
            Types.NestedField.optional(5, "d", Types.DateType.get()),
            Types.NestedField.optional(6, "b", Types.BooleanType.get()),
            Types.NestedField.optional(7, "x", Types.DoubleType.get()),
            Types.NestedField.optional(8, "f", Types.FloatType.get()),
            Types.NestedField.optional(9, "bin", Types.BinaryType.get()),
            Types.NestedField.optional(10, "dec", Types.DecimalType.of(12, 2)));

    @TempDir
    Path dir;

    private static Object value(Random random, int column) {
        if (random.nextInt(8) == 0) {
            return null;
        }
        return switch (column) {
            case 0 -> "k-" + random.nextInt(300) + (random.nextBoolean() ? "" : "é");
            case 1 -> (long) random.nextInt(300) - 150;
            case 2 -> random.nextInt(300);
            case 3 -> OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).plusNanos(random.nextInt(300) * 1_000_000_000L
                    + random.nextInt(1_000_000) * 1000L);
            case 4 -> LocalDate.of(2024, 1, 1).plusDays(random.nextInt(300));
            case 5 -> random.nextBoolean();
            case 6 -> random.nextInt(300) / 7.0;
            case 7 -> random.nextInt(300) / 4.0f;
            case 8 -> ByteBuffer.wrap(new byte[] {(byte) random.nextInt(17), (byte) random.nextInt(17)});
            default -> java.math.BigDecimal.valueOf(random.nextInt(30000), 2);
        };
    }

    private static Table table(Path location, Random random) throws Exception {
        Table t = new HadoopTables(new Configuration()).create(SCHEMA, PartitionSpec.unpartitioned(), Map.of(
                "format-version", "2", "write.parquet.row-group-size-bytes", String.valueOf(1024 + random.nextInt(8192)),
                "write.parquet.page-size-bytes", "512", "write.parquet.page-row-limit", "50"), location.toString());
        GenericFileWriterFactory writers = new GenericFileWriterFactory.Builder(t).dataFileFormat(FileFormat.PARQUET)
                .deleteFileFormat(FileFormat.PARQUET).build();
        OutputFileFactory files = OutputFileFactory.builderFor(t, 0, 1).format(FileFormat.PARQUET)
                .operationId(UUID.randomUUID().toString()).build();
        int fileCount = 1 + random.nextInt(3);
        var append = t.newAppend();
        List<DataFile> written = new ArrayList<>();
        for (int f = 0; f < fileCount; f++) {
            DataWriter<Record> w = writers.newDataWriter(files.newOutputFile(), t.spec(), null);
            try (w) {
                int rows = random.nextInt(2000);
                for (int r = 0; r < rows; r++) {
                    GenericRecord rec = GenericRecord.create(SCHEMA);
                    for (int c = 0; c < SCHEMA.columns().size(); c++) {
                        rec.set(c, value(random, c));
                    }
                    w.write(rec);
                }
            }
            written.add(w.toDataFile());
            append.appendFile(w.toDataFile());
        }
        append.commit();
        if (random.nextBoolean()) {
            var delta = t.newRowDelta();
            for (DataFile file : written) {
                PositionDeleteWriter<Record> w = writers.newPositionDeleteWriter(files.newOutputFile(), t.spec(), null);
                try (w) {
                    PositionDelete<Record> delete = PositionDelete.create();
                    for (long p = 0; p < file.recordCount(); p++) {
                        if (random.nextInt(4) == 0) {
                            w.write(delete.set(file.location(), p));
                        }
                    }
                }
                delta.addDeletes(w.toDeleteFile());
            }
            delta.commit();
        }
        return t;
    }

    /** What each of the probe's readers finds in {@code t}: every hit, as file, position and row, sorted. */
    static Map<IcebergFiles.ProbeReader, List<String>> byEachReader(Table t, int[] key, int[] metadata,
                                                                    Set<List<Object>> keys) {
        Map<IcebergFiles.ProbeReader, List<String>> found = new java.util.EnumMap<>(IcebergFiles.ProbeReader.class);
        for (IcebergFiles.ProbeReader reader : IcebergFiles.ProbeReader.values()) {
            found.put(reader, new IcebergFiles(t, reader).probe(t.currentSnapshot(), key, metadata, keys).stream()
                    .map(h -> h.file() + "@" + h.position() + Arrays.deepToString(h.row())).sorted().toList());
        }
        return found;
    }

    @Test
    void theColumnarReaderFindsWhatIcebergsReadersFind() throws Exception {
        Random random = new Random(23);
        int columnarHits = 0;
        for (int round = 0; round < 25; round++) {
            Table t = table(dir.resolve("t" + round), random);
            // a key of one to three of the readable columns; metadata: some other columns, decimals included
            List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5, 8));
            java.util.Collections.shuffle(order, random);
            // every third round the common key, one string column (read by its bytes' hash first)
            int[] key = round % 3 == 0 ? new int[] {0}
                    : order.subList(0, 1 + random.nextInt(3)).stream().mapToInt(Integer::intValue).toArray();
            int[] metadata = java.util.stream.IntStream.range(0, SCHEMA.columns().size())
                    .filter(c -> Arrays.stream(key).noneMatch(k -> k == c) && random.nextInt(3) > 0).toArray();
            boolean withDecimal = Arrays.stream(metadata).anyMatch(c -> c == 9);
            Set<List<Object>> keys = new HashSet<>();
            try (CloseableIterable<Record> rows = org.apache.iceberg.data.IcebergGenerics.read(t).build()) {
                for (Record r : rows) {
                    if (random.nextInt(5) == 0) {
                        List<Object> k = new ArrayList<>();
                        for (int c : key) {
                            k.add(dev.kbackfill.sink.lake.LakeValues.keyValue(IcebergTypes.physical(r.get(c))));
                        }
                        keys.add(k);
                    }
                }
            }
            for (int extra = 0; extra < 20; extra++) {
                List<Object> k = new ArrayList<>();
                for (int c : key) {
                    k.add(dev.kbackfill.sink.lake.LakeValues.keyValue(IcebergTypes.physical(value(random, c))));
                }
                keys.add(k);
            }
            if (t.currentSnapshot() == null) {
                continue;
            }
            Map<IcebergFiles.ProbeReader, List<String>> found = byEachReader(t, key, metadata, keys);
            List<String> columnar = found.get(IcebergFiles.ProbeReader.COLUMNAR);
            List<String> generic = found.get(IcebergFiles.ProbeReader.GENERIC);
            List<String> internal = found.get(IcebergFiles.ProbeReader.INTERNAL);
            assertThat(columnar).as("round %s, key %s, metadata %s", round, Arrays.toString(key),
                    Arrays.toString(metadata)).isEqualTo(generic).isEqualTo(internal);
            // the columnar reader read these files itself, unless a decimal sent them to Iceberg's readers
            List<Types.NestedField> fields = new ArrayList<>();
            java.util.SortedSet<Integer> read = new java.util.TreeSet<>();
            Arrays.stream(key).forEach(read::add);
            Arrays.stream(metadata).forEach(read::add);
            read.forEach(c -> fields.add(SCHEMA.columns().get(c)));
            int[] keyAt = Arrays.stream(key).map(k -> new ArrayList<>(read).indexOf(k)).toArray();
            try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
                for (FileScanTask task : tasks) {
                    boolean readIt = ColumnarProbe.probe(t, task, fields, keyAt, dev.kbackfill.sink.lake.KeyFilter.of(keys),
                            (p, v) -> {
                    });
                    assertThat(readIt).isEqualTo(!withDecimal);
                }
            }
            columnarHits += withDecimal ? 0 : columnar.size();
        }
        assertThat(columnarHits).as("rows the columnar reader found itself").isGreaterThan(1000);
    }

    @Test
    void aStringKeysHashFromItsBytesIsItsStringsHashWhereTheBytesAreAscii() {
        Random random = new Random(5);
        for (int i = 0; i < 10_000; i++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(40);
            for (int c = 0; c < length; c++) {
                text.append((char) random.nextInt(128));
            }
            String s = text.toString();
            byte[] padded = ("xx" + s + "yy").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThat(ColumnarProbe.asciiHash(org.apache.parquet.io.api.Binary.fromString(s))).isEqualTo(s.hashCode());
            assertThat(ColumnarProbe.asciiHash(org.apache.parquet.io.api.Binary.fromConstantByteArray(padded, 2,
                    padded.length - 4))).isEqualTo(s.hashCode());
        }
        assertThat(ColumnarProbe.asciiHash(org.apache.parquet.io.api.Binary.fromString("caf\u00e9")))
                .isEqualTo(Long.MIN_VALUE);
    }
}
