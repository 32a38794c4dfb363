package dev.kbackfill.sink.lake;

import java.io.IOException;
import java.util.NoSuchElementException;

import dev.kbackfill.core.read.archive.ArchiveStore;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/**
 * Reads an archive's Parquet files (Confluent's and Aiven's Parquet formats) with parquet-mr as Avro records, through
 * the archive's Hadoop filesystem ({@code s3a://}) or, for a local folder, Hadoop's local one. Registered with
 * {@link java.util.ServiceLoader}.
 */
public final class HadoopParquetRows implements ArchiveStore.ParquetReader {

    /** The local filesystem's settings, made once: an archive of thousands of files opens each. */
    private static final java.util.function.Supplier<Configuration> LOCAL = new java.util.function.Supplier<>() {
        private Configuration conf;

        @Override
        public synchronized Configuration get() {
            if (conf == null) {
                conf = HadoopCheckpointFiles.configuration(java.util.Map.of());
            }
            return conf;
        }
    };

    @Override
    public ArchiveStore.Rows rows(ArchiveStore store, String path) throws IOException {
        Path file;
        Configuration conf;
        if (store instanceof HadoopArchiveStore h) {
            file = new Path(h.root(), path);
            conf = h.fs().getConf();
        } else {
            java.nio.file.Path local = store.localFile(path).orElseThrow(() -> new IOException("archive "
                    + store.location() + " is neither a local folder nor on a Hadoop filesystem"));
            file = new Path(local.toUri());
            conf = LOCAL.get();
        }
        ParquetReader<GenericRecord> reader = AvroParquetReader.<GenericRecord>builder(
                HadoopInputFile.fromPath(file, conf)).withDataModel(GenericData.get()).withConf(conf).build();
        return new ArchiveStore.Rows() {
            GenericRecord next;

            @Override
            public boolean hasNext() {
                if (next == null) {
                    try {
                        next = reader.read();
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
                return next != null;
            }

            @Override
            public Object next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                GenericRecord r = next;
                next = null;
                return r;
            }

            @Override
            public void close() throws IOException {
                reader.close();
            }
        };
    }
}
