package dev.kbackfill.core.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

import dev.kbackfill.core.sink.ConflictMode;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.core.sink.TombstoneMode;
import dev.kbackfill.resolver.RequestException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sink's client settings in a job's value: a lake table's filesystem settings, never its credentials. */
class SinkTargetTest {

    @TempDir
    Path dir;

    private static dev.kbackfill.core.sink.SinkTarget target(String url, Optional<Path> file, Map<String, String> client) {
        return new dev.kbackfill.core.sink.SinkTarget(url, "t", Optional.empty(), ConflictMode.NEWER_WINS, TombstoneMode.DELETE,
                false, false, file, client, Map.of());
    }

    @Test
    void settingsThatHoldCredentialsAreRefusedAndTheirValueIsNotRepeated() {
        for (String key : new String[] {"fs.s3a.secret.key", "fs.s3a.access.key", "fs.s3a.session.token",
                "fs.azure.account.key.acct.dfs.core.windows.net.password", "sasl.jaas.config",
                "fs.gs.auth.service.account.private.key.credential"}) {
            assertThatThrownBy(() -> target("delta:s3a://b/t", Optional.empty(), Map.of(key, "hunter2")))
                    .as(key).isInstanceOf(RequestException.class)
                    .hasMessageContaining("invalid --sink-property '" + key + "'")
                    .hasMessageContaining("--sink-command-config").hasMessageNotContaining("hunter2");
        }
    }

    @Test
    void filesystemSettingsAndACredentialsProviderTravelWithTheJob() {
        Map<String, String> client = Map.of("fs.s3a.endpoint", "http://minio:9000", "fs.s3a.path.style.access", "true",
                "fs.s3a.aws.credentials.provider", "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider");
        SinkSettings s = target("delta:s3a://b/t", Optional.empty(), client).settings("orders", Map.of(
                "bootstrap.servers", "kafka:9092"));
        assertThat(s.clientConfig()).isEqualTo(Map.copyOf(client)); // no Kafka settings for a lake table
    }

    @Test
    void aSettingsFileIsReadWhereTheSinkOpensAndTheCommandLineWinsOverIt() throws Exception {
        Path file = Files.writeString(dir.resolve("s3.properties"),
                "fs.s3a.secret.key=from-file\nfs.s3a.endpoint=http://file:9000\n");
        SinkSettings s = target("delta:s3a://b/t", Optional.of(file), Map.of("fs.s3a.endpoint", "http://cli:9000"))
                .settings("orders", Map.of());
        assertThat(s.clientConfig()).containsEntry("fs.s3a.secret.key", "from-file")
                .containsEntry("fs.s3a.endpoint", "http://cli:9000");
    }
}
