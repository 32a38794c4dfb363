package dev.kbackfill.sink.delta;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.CRC32;

import io.delta.kernel.Snapshot;
import io.delta.kernel.internal.actions.DeletionVectorDescriptor;
import io.delta.kernel.internal.deletionvectors.Base85Codec;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.roaringbitmap.RoaringBitmap;

/**
 * Deletion vectors written per the Delta protocol: the rows a batch replaces or deletes in a data file are marked
 * deleted instead of the file being rewritten, so a backfill touching 1% of a table's keys writes 1% of its rows.
 * All deletion vectors of one commit go to one file {@code deletion_vector_<uuid>.bin} in the table's root
 * (storage type {@code u}): a version byte 1, then per vector its size (4 bytes, big-endian), the bitmap in the
 * portable RoaringBitmapArray format (magic 1681511377, the number of 32-bit bitmaps as a little-endian long, each
 * with its little-endian int key and its portable Roaring serialization) and the CRC-32 of the bitmap (big-endian).
 * A data file of kbackfill's holds fewer than 2^31 rows, so one bitmap (key 0) holds its positions.
 */
final class DeletionVectors {

    /** The table property that makes writers mark rows deleted instead of rewriting files. */
    static final String ENABLE_PROPERTY = "delta.enableDeletionVectors";
    private static final int PORTABLE_MAGIC = 1681511377;

    private final String tableRoot;
    private final Configuration hadoop;
    private final UUID id = UUID.randomUUID();
    private final ByteArrayOutputStream file = new ByteArrayOutputStream();

    DeletionVectors(String tableRoot, Configuration hadoop) {
        this.tableRoot = tableRoot;
        this.hadoop = hadoop;
        file.write(1); // format version
    }

    /** Whether writers of this table mark deleted rows in deletion vectors: the feature is on and the property set. */
    static boolean enabled(Snapshot snapshot) {
        return Boolean.parseBoolean(snapshot.getTableProperties().getOrDefault(ENABLE_PROPERTY, "false"))
                && KernelInternals.supportsDeletionVectors(snapshot);
    }

    /** Adds a vector of the given positions to this commit's file; returns its descriptor. */
    DeletionVectorDescriptor add(RoaringBitmap positions) {
        byte[] data = serialize(positions);
        int offset = file.size();
        try {
            DataOutputStream out = new DataOutputStream(file);
            out.writeInt(data.length);
            out.write(data);
            CRC32 crc = new CRC32();
            crc.update(data);
            out.writeInt((int) crc.getValue());
        } catch (IOException e) {
            throw new IllegalStateException(e); // a byte array does not fail
        }
        return new DeletionVectorDescriptor(DeletionVectorDescriptor.UUID_DV_MARKER, Base85Codec.encodeUUID(id),
                Optional.of(offset), data.length, positions.getLongCardinality());
    }

    /** The table root the vectors' file goes to, fully qualified. */
    String tableRoot() {
        return tableRoot;
    }

    /** Whether some vector was added, so that the file must be written before the commit. */
    boolean any() {
        return file.size() > 1;
    }

    /** Writes the file (never overwriting); a commit that then fails leaves it unreferenced, for VACUUM. */
    void write() throws IOException {
        Path path = new Path(new Path(tableRoot), "deletion_vector_" + id + ".bin");
        // an instance of its own: no .crc side file (the vector carries its own CRC-32), the shared one untouched
        try (FileSystem fs = FileSystem.newInstance(path.toUri(), hadoop)) {
            fs.setWriteChecksum(false);
            try (OutputStream out = fs.create(path, false)) {
                file.writeTo(out);
            }
        }
    }

    /** The portable RoaringBitmapArray serialization of row positions below 2^31. */
    static byte[] serialize(RoaringBitmap positions) {
        positions.runOptimize();
        ByteBuffer b = ByteBuffer.allocate(4 + 8 + 4 + positions.serializedSizeInBytes()).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(PORTABLE_MAGIC);
        b.putLong(1);
        b.putInt(0);
        positions.serialize(b);
        return b.array();
    }
}
