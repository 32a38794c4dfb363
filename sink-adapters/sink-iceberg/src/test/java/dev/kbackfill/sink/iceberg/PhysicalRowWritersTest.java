package dev.kbackfill.sink.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.types.Types;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data files written from physical values through Iceberg's internal writer hold what Iceberg's generic writer
 * would write from the same rows: every column type kbackfill writes, nulls, values at the edges of their types;
 * read back by Iceberg's generic reader, with the same metrics (counts and bounds) and the table's codec.
 */
class PhysicalRowWritersTest {

    private static final Schema SCHEMA = new Schema(
            Types.NestedField.required(1, "s", Types.StringType.get()),
            Types.NestedField.optional(2, "l", Types.LongType.get()),
            Types.NestedField.optional(3, "i", Types.IntegerType.get()),
            Types.NestedField.optional(4, "ts", Types.TimestampType.withZone()),
            Types.NestedField.optional(5, "tsl", Types.TimestampType.withoutZone()),
            Types.NestedField.optional(6, "d", Types.DateType.get()),
            Types.NestedField.optional(7, "b", Types.BooleanType.get()),
            Types.NestedField.optional(8, "x", Types.DoubleType.get()),
            Types.NestedField.optional(9, "f", Types.FloatType.get()),
            Types.NestedField.optional(10, "bin", Types.BinaryType.get()),
            Types.NestedField.optional(11, "dec", Types.DecimalType.of(38, 18)),
            Types.NestedField.optional(12, "small", Types.DecimalType.of(9, 2)));

    @TempDir
    Path dir;

    /** A row of physical values, as the sink builds them (floats as doubles, as the lake values hold them). */
    private static Object[] physicalRow(Random random, int n) {
        Object[] row = new Object[SCHEMA.columns().size()];
        row[0] = String.format("k-%06d%s", n, random.nextInt(5) == 0 ? "é" : "");
        for (int c = 1; c < row.length; c++) {
            if (random.nextInt(6) == 0) {
                continue;
            }
            row[c] = switch (c) {
                case 1 -> random.nextBoolean() ? random.nextLong() : (long) random.nextInt(100);
                case 2 -> random.nextInt(8) == 0 ? Integer.MIN_VALUE : random.nextInt();
                case 3, 4 -> random.nextLong(-62_135_596_800_000_000L, 253_402_300_799_999_999L); // years 1-9999
                case 5 -> random.nextInt(-719_162, 2_932_896);
                case 6 -> random.nextBoolean();
                case 7 -> random.nextInt(10) == 0 ? -0.0 : random.nextDouble() * 1e6 - 5e5;
                case 8 -> (double) (random.nextFloat() * 1000 - 500);
                case 9 -> {
                    byte[] b = new byte[random.nextInt(5)];
                    random.nextBytes(b);
                    yield b;
                }
                case 10 -> new BigDecimal(random.nextLong()).movePointLeft(random.nextInt(10)).setScale(18);
                default -> BigDecimal.valueOf(random.nextInt(-999_999_999, 1_000_000_000), 2);
            };
        }
        return row;
    }

    /** The same row as Iceberg's generic records hold it. */
    private static GenericRecord generic(Object[] row) {
        GenericRecord r = GenericRecord.create(SCHEMA);
        for (int c = 0; c < row.length; c++) {
            Object v = row[c];
            if (v != null) {
                v = switch (c) {
                    case 3 -> OffsetDateTime.ofInstant(instant((Long) v), ZoneOffset.UTC);
                    case 4 -> OffsetDateTime.ofInstant(instant((Long) v), ZoneOffset.UTC).toLocalDateTime();
                    case 5 -> LocalDate.ofEpochDay((Integer) v);
                    case 8 -> ((Double) v).floatValue();
                    case 9 -> java.nio.ByteBuffer.wrap((byte[]) v);
                    default -> v;
                };
            }
            r.set(c, v);
        }
        return r;
    }

    private static Instant instant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }

    @Test
    void filesWrittenFromPhysicalValuesReadBackAsWrittenWithTheGenericWritersMetricsAndTheTablesCodec()
            throws Exception {
        for (int seed = 0; seed < 8; seed++) {
            Random random = new Random(seed);
            String codec = List.of("zstd", "snappy", "gzip", "uncompressed").get(seed % 4);
            Table t = new HadoopTables(new Configuration()).create(SCHEMA, PartitionSpec.unpartitioned(), Map.of(
                    "format-version", "2", "write.parquet.compression-codec", codec,
                    "write.parquet.row-group-size-bytes", String.valueOf(4096 + random.nextInt(65536))),
                    dir.resolve("t" + seed).toString());
            List<Object[]> rows = new ArrayList<>();
            int count = 1 + random.nextInt(3000);
            for (int n = 0; n < count; n++) {
                rows.add(physicalRow(random, n));
            }

            List<DataFile> ours = new IcebergFiles(t).writeRows(rows, new int[] {0});
            DataFile theirs = genericFile(t, rows);

            assertThat(ours).hasSize(1);
            DataFile file = ours.get(0);
            assertThat(file.recordCount()).isEqualTo(count);
            assertThat(file.valueCounts()).isEqualTo(theirs.valueCounts());
            assertThat(file.nullValueCounts()).isEqualTo(theirs.nullValueCounts());
            assertThat(file.nanValueCounts()).isEqualTo(theirs.nanValueCounts());
            assertThat(file.lowerBounds()).as("seed %d", seed).isEqualTo(theirs.lowerBounds());
            assertThat(file.upperBounds()).as("seed %d", seed).isEqualTo(theirs.upperBounds());
            try (ParquetFileReader footer = ParquetFileReader.open(HadoopInputFile.fromPath(
                    new org.apache.hadoop.fs.Path(file.location()), new Configuration()))) {
                assertThat(footer.getRowGroups().get(0).getColumns().get(0).getCodec().name())
                        .isEqualToIgnoringCase(codec);
            }

            t.newAppend().appendFile(file).commit();
            List<Object[]> read = new ArrayList<>();
            try (CloseableIterable<Record> records = IcebergGenerics.read(t).build()) {
                for (Record r : records) {
                    Object[] row = new Object[SCHEMA.columns().size()];
                    for (int c = 0; c < row.length; c++) {
                        row[c] = IcebergTypes.physical(r.get(c));
                    }
                    read.add(row);
                }
            }
            read.sort(Comparator.comparing(r -> (String) r[0]));
            assertThat(read).hasSize(count);
            for (int n = 0; n < count; n++) {
                Object[] expected = rows.get(n).clone();
                if (expected[8] != null) {
                    expected[8] = (double) ((Double) expected[8]).floatValue();
                }
                assertThat(Arrays.deepEquals(read.get(n), expected)).as("seed %d row %d: %s, wrote %s", seed, n,
                        Arrays.deepToString(read.get(n)), Arrays.deepToString(expected)).isTrue();
            }
        }
    }

    @Test
    void aKeyOfOneColumnIsWrittenWithoutADictionaryUnlessTheTableAsksForOneAndOtherColumnsKeepTheirs()
            throws Exception {
        // Unique keys fall back from a dictionary to plain values at the end of the first page, so a file's pages look
        // the same either way (the dictionary only cost CPU). Here the key column repeats three values, where a
        // dictionary pays and Parquet keeps it: the file shows whether one was tried.
        Random random = new Random(7);
        List<Object[]> rows = new ArrayList<>();
        for (int n = 0; n < 5000; n++) {
            Object[] row = physicalRow(random, n);
            row[0] = "k-" + n % 3;
            row[1] = (long) (n % 3);
            rows.add(row);
        }
        Table plain = new HadoopTables(new Configuration()).create(SCHEMA, PartitionSpec.unpartitioned(),
                Map.of("format-version", "2"), dir.resolve("plain").toString());
        assertThat(dictionaryEncoded(new IcebergFiles(plain).writeRows(rows, new int[] {0}).get(0)))
                .as("the key (s) has none; l keeps its dictionary").doesNotContain("s").contains("l");
        assertThat(dictionaryEncoded(new IcebergFiles(plain).writeRows(rows, new int[] {0, 1}).get(0)))
                .as("the columns of a compound key repeat: each keeps its dictionary").contains("s", "l");

        Table asked = new HadoopTables(new Configuration()).create(SCHEMA, PartitionSpec.unpartitioned(),
                Map.of("format-version", "2", "write.parquet.dict-encoding-enabled.column.s", "true"),
                dir.resolve("asked").toString());
        assertThat(dictionaryEncoded(new IcebergFiles(asked).writeRows(rows, new int[] {0}).get(0)))
                .as("the table's own setting for the key column wins").contains("s", "l");
    }

    @Test
    void aKeyColumnBesideIdentityPartitionsIsWrittenWithoutADictionaryWhileATransformsSourceKeepsIt() throws Exception {
        // a key of (s, l) in a table partitioned by l: each file holds one l, so s tells its rows apart; here s repeats
        // three values in each file, where a dictionary pays and Parquet keeps it: the file shows whether one was tried
        Random random = new Random(11);
        List<Object[]> rows = new ArrayList<>();
        for (int n = 0; n < 6000; n++) {
            Object[] row = physicalRow(random, n);
            row[0] = "k-" + (n / 3) % 3;
            row[1] = (long) (n % 3);
            rows.add(row);
        }
        Table byL = new HadoopTables(new Configuration()).create(SCHEMA, PartitionSpec.builderFor(SCHEMA).identity("l")
                .build(), Map.of("format-version", "2"), dir.resolve("by-l").toString());
        List<DataFile> files = new IcebergFiles(byL).writeRows(rows, new int[] {0, 1});
        assertThat(files).hasSize(3);
        for (DataFile file : files) {
            assertThat(dictionaryEncoded(file)).as("s has none; l keeps its dictionary").doesNotContain("s")
                    .contains("l");
        }
        Table bucketed = new HadoopTables(new Configuration()).create(SCHEMA, PartitionSpec.builderFor(SCHEMA)
                .bucket("l", 2).build(), Map.of("format-version", "2"), dir.resolve("bucketed").toString());
        for (DataFile file : new IcebergFiles(bucketed).writeRows(rows, new int[] {0, 1})) {
            assertThat(dictionaryEncoded(file)).as("a bucket holds several l: each key column keeps its dictionary")
                    .contains("s", "l");
        }
    }

    @Test
    void theKeyColumnDistinctInEveryFileIsTheOneNoIdentityPartitionHolds() {
        PartitionSpec none = PartitionSpec.unpartitioned();
        PartitionSpec byL = PartitionSpec.builderFor(SCHEMA).identity("l").build();
        PartitionSpec byLAndS = PartitionSpec.builderFor(SCHEMA).identity("l").identity("s").build();
        PartitionSpec byDay = PartitionSpec.builderFor(SCHEMA).day("ts").build();
        PartitionSpec byBucket = PartitionSpec.builderFor(SCHEMA).bucket("l", 4).build();
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, none, new int[] {0})).contains("s");
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, none, new int[] {0, 1})).isEmpty();
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byL, new int[] {0, 1})).contains("s");
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byL, new int[] {1, 0})).contains("s");
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byL, new int[] {0, 1, 2})).isEmpty();
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byL, new int[] {1})).isEmpty();
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byLAndS, new int[] {0, 1})).isEmpty();
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byDay, new int[] {0, 3})).isEmpty();
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byBucket, new int[] {0, 1})).isEmpty();
        assertThat(IcebergFiles.distinctInEveryFile(SCHEMA, byDay, new int[] {0})).contains("s");
    }

    /** The columns of a data file whose first row group has a dictionary page. */
    private static List<String> dictionaryEncoded(DataFile file) throws Exception {
        try (ParquetFileReader footer = ParquetFileReader.open(HadoopInputFile.fromPath(
                new org.apache.hadoop.fs.Path(file.location()), new Configuration()))) {
            return footer.getRowGroups().get(0).getColumns().stream().filter(c -> c.hasDictionaryPage())
                    .map(c -> c.getPath().toDotString()).toList();
        }
    }

    private static DataFile genericFile(Table t, List<Object[]> rows) throws Exception {
        GenericFileWriterFactory writers = new GenericFileWriterFactory.Builder(t).dataFileFormat(FileFormat.PARQUET)
                .build();
        OutputFileFactory files = OutputFileFactory.builderFor(t, 9, 1).format(FileFormat.PARQUET)
                .operationId(UUID.randomUUID().toString()).build();
        DataWriter<Record> w = writers.newDataWriter(files.newOutputFile(), t.spec(), null);
        try (w) {
            for (Object[] row : rows) {
                w.write(generic(row));
            }
        }
        return w.toDataFile();
    }
}
