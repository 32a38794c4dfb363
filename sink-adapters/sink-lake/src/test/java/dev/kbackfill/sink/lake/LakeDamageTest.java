package dev.kbackfill.sink.lake;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.UncheckedIOException;

import dev.kbackfill.core.run.Transient;
import dev.kbackfill.core.sink.TableDamagedException;
import org.junit.jupiter.api.Test;

class LakeDamageTest {

    private static RuntimeException named(RuntimeException e) {
        return LakeDamage.named("T", e, path -> path.endsWith(".json") ? "log entry" : "data file", role -> "mend it");
    }

    @Test
    void aMissingFileNamedByTheFailureIsNamedWithItsRoleAndRemedy() {
        RuntimeException e = named(new RuntimeException("Failed to open input stream for file: s3a://b/t/x-1.parquet",
                new FileNotFoundException("no such file")));
        assertThat(e).isInstanceOf(TableDamagedException.class)
                .hasMessage("T: data file s3a://b/t/x-1.parquet is missing; mend it");
    }

    @Test
    void aFileCutShortIsNamedAndNoRetryIsTriedThoughItsCauseIsAnEndOfFile() {
        RuntimeException failed = new UncheckedIOException(new EOFException("Cannot seek after EOF"));
        assertThat(Transient.is(failed)).isTrue(); // an end of file alone reads as a connection cut
        RuntimeException e = named(LakeDamage.inFile("/t/data/a.parquet", "delete file", failed));
        assertThat(e).isInstanceOf(TableDamagedException.class).hasMessage("T: delete file /t/data/a.parquet is cut "
                + "short or corrupt (EOFException: Cannot seek after EOF); mend it");
        assertThat(Transient.is(e)).isFalse();
    }

    @Test
    void aFailureThatNoFileExplainsIsLeftAsItIs() {
        RuntimeException lost = new UncheckedIOException(new java.net.SocketException("Connection reset"));
        assertThat(named(lost)).isSameAs(lost);
        assertThat(LakeDamage.inFile("/t/a.parquet", "data file", lost)).isSameAs(lost);
        RuntimeException denied = new RuntimeException("Permission denied: /t/a.parquet");
        assertThat(named(denied)).isSameAs(denied);
    }

    @Test
    void aMetadataVersionTheHintNamesButTheTableLacksIsSaidSo() {
        RuntimeException e = named(new IllegalStateException("Metadata file for version 5 is missing under /t/metadata"));
        assertThat(e).hasMessage("T: the metadata file of version 5 is missing under /t/metadata (its version hint "
                + "names it); mend it");
    }
}
