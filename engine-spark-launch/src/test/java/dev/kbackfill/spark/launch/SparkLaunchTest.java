package dev.kbackfill.spark.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

import dev.kbackfill.resolver.RequestException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher's options and the driver's JVM, without Spark. */
class SparkLaunchTest {

    private static final Path DIR = Path.of("engine");

    @Test
    void optionsRefuseWhatNoLaunchCouldUseNamingTheValueAndTheAcceptedForms() {
        assertThatThrownBy(() -> new SparkLaunch.Options("local[2]", 0, DIR)).isInstanceOf(RequestException.class)
                .hasMessage("invalid --spark-wave-partitions '0': expected a whole number >= 1");
        assertThatThrownBy(() -> new SparkLaunch.Options("yarn", Optional.of("remote"), List.of(), 4,
                OptionalInt.empty(), DIR)).hasMessage("invalid --deploy-mode 'remote': expected client or cluster");
        assertThatThrownBy(() -> new SparkLaunch.Options("yarn", Optional.empty(), List.of("spark.x"), 4,
                OptionalInt.empty(), DIR)).hasMessageStartingWith("invalid --conf 'spark.x': expected KEY=VALUE");
        assertThatThrownBy(() -> new SparkLaunch.Options("yarn", Optional.empty(), List.of(), 4, OptionalInt.of(0), DIR))
                .hasMessageStartingWith("invalid --spark-max-connections '0'");
        assertThat(new SparkLaunch.Options("local[2]", 3, DIR).engineName()).isEqualTo("spark, 3 partitions per wave");
    }

    @Test
    void aLaunchWithoutTheBuiltEngineFailsInOneLineNamingWhatIsMissingAndHowToGetIt(@TempDir Path empty) {
        SparkLaunch launch = new SparkLaunch(new SparkLaunch.Options("local[2]", 4, empty),
                new java.io.PrintWriter(java.io.Writer.nullWriter()), new java.io.PrintWriter(java.io.Writer.nullWriter()),
                new dev.kbackfill.core.run.RunHandle());
        assertThatThrownBy(() -> launch.writeSpec(null, null, null, empty.resolve("spec.json"), null))
                .isInstanceOf(dev.kbackfill.core.run.RunFailure.class)
                .hasMessage("the Spark engine is not built (no " + empty.resolve("kbackfill-spark.jar") + "): run 'mvn -B "
                        + "-q -DskipTests install' in the kbackfill checkout, or set KBACKFILL_SPARK_DIR");
    }

    @Test
    void theDriverOnTheBuiltRuntimeGetsItsMemoryAndExtraJavaOptions() {
        assertThat(SparkLaunch.driverJvmOptions(Optional.empty(), Optional.empty())).startsWith("-Xmx2g")
                .contains("--add-opens=java.base/java.nio=ALL-UNNAMED");
        assertThat(SparkLaunch.driverJvmOptions(Optional.of("3g"),
                Optional.of(" -XX:TieredStopAtLevel=1   -XX:+UseSerialGC -Dx=y ")))
                .startsWith("-Xmx3g").endsWith("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dx=y");
    }
}
