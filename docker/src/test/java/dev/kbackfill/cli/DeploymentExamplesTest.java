package dev.kbackfill.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The compose file and the Kubernetes CronJob in {@code docker/} say what the command line accepts: their
 * arguments parse, their settings name real options, their exit-code rules are kbackfill's exit codes, and they
 * run the image this build makes. (Neither can run here: no container runtime pulls their images.)
 */
class DeploymentExamplesTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Path DOCKER = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
    private static final String IMAGE_TAG = System.getProperty("image.name", "kbackfill:0.1.0-SNAPSHOT")
            .replaceFirst("^kbackfill", "");

    private static List<JsonNode> documents(String file) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (YAMLParser parser = new YAMLFactory().createParser(DOCKER.resolve(file).toFile())) {
            var it = YAML.readValues(parser, JsonNode.class);
            while (it.hasNext()) {
                docs.add(it.next());
            }
        }
        return docs;
    }

    private static List<String> strings(JsonNode array) {
        List<String> values = new ArrayList<>();
        ((ArrayNode) array).forEach(n -> values.add(n.asText()));
        return values;
    }

    /** Every long option of every command, as a settings key ({@code sink-user}). */
    private static Set<String> settingsKeys(String... commands) {
        Set<String> keys = new HashSet<>();
        CommandLine cli = Kbackfill.commandLine();
        for (String command : commands) {
            for (CommandLine.Model.OptionSpec o : cli.getSubcommands().get(command).getCommandSpec().options()) {
                if (o.longestName().startsWith("--")) {
                    keys.add(o.longestName().substring(2));
                }
            }
        }
        return keys;
    }

    private static void assertParses(List<String> args) {
        CommandLine.ParseResult parsed = Kbackfill.commandLine().parseArgs(args.toArray(String[]::new));
        assertThat(parsed.hasSubcommand()).as("a command in " + args).isTrue();
    }

    @Test
    void theCronJobNeverOverlapsRunsAndDoesNotRetryWhatARetryCannotFix() throws IOException {
        JsonNode cron = documents("kubernetes/cronjob.yaml").stream()
                .filter(d -> d.path("kind").asText().equals("CronJob")).findFirst().orElseThrow();
        assertThat(cron.at("/spec/concurrencyPolicy").asText()).isEqualTo("Forbid");
        JsonNode job = cron.at("/spec/jobTemplate/spec");
        assertThat(job.at("/template/spec/restartPolicy").asText()).isEqualTo("Never");
        JsonNode rule = job.at("/podFailurePolicy/rules/0");
        assertThat(rule.path("action").asText()).isEqualTo("FailJob");
        assertThat(strings(rule.at("/onExitCodes/values")))
                .containsExactlyInAnyOrder(String.valueOf(ExitCodes.BAD_INPUT), String.valueOf(ExitCodes.JOB_CONFLICT));
        // SIGTERM on eviction: the run needs time to commit its batch before the kill
        assertThat(job.at("/template/spec/terminationGracePeriodSeconds").asInt()).isGreaterThanOrEqualTo(30);
    }

    @Test
    void theCronJobsCommandLineAndSettingsAreKbackfills() throws IOException {
        List<JsonNode> docs = documents("kubernetes/cronjob.yaml");
        JsonNode cron = docs.stream().filter(d -> d.path("kind").asText().equals("CronJob")).findFirst().orElseThrow();
        JsonNode container = cron.at("/spec/jobTemplate/spec/template/spec/containers/0");
        assertThat(container.path("name").asText()).isEqualTo("kbackfill");
        assertThat(container.path("image").asText()).endsWith(IMAGE_TAG);
        List<String> args = strings(container.path("args"));
        assertParses(args);
        assertThat(args).contains("--job").anySatisfy(a -> assertThat(a).startsWith("continue:"));

        JsonNode config = docs.stream().filter(d -> d.path("kind").asText().equals("ConfigMap")).findFirst().orElseThrow();
        Properties settings = new Properties();
        settings.load(new StringReader(config.at("/data/kbackfill.properties").asText()));
        assertThat(settings).isNotEmpty();
        assertThat(settingsKeys("run")).containsAll(settings.stringPropertyNames());
        List<String> env = new ArrayList<>();
        container.path("env").forEach(e -> env.add(e.path("name").asText()));
        assertThat(env).contains(SettingsDefaults.CONFIG_ENV, "KBACKFILL_SINK_PASSWORD");
        JsonNode password = container.path("env").findParent("secretKeyRef");
        assertThat(password).as("the password comes from a Secret").isNotNull();
    }

    @Test
    void theComposeServiceRunsThisImageWithSettingsOfRealOptions() throws IOException {
        JsonNode compose = documents("compose.yaml").get(0);
        assertThat(compose.path("services").fieldNames()).toIterable()
                .containsExactlyInAnyOrder("kafka", "registry", "postgres", "kbackfill");
        assertThat(compose.at("/services/kafka/environment/KAFKA_PROCESS_ROLES").asText())
                .isEqualTo("broker,controller");
        JsonNode kbackfill = compose.at("/services/kbackfill");
        assertThat(kbackfill.path("image").asText()).isEqualTo("kbackfill" + IMAGE_TAG);
        assertParses(strings(kbackfill.path("command")));
        Set<String> variables = new HashSet<>();
        settingsKeys("run", "demo", "plan", "jobs").forEach(k -> variables.add(SettingsDefaults.variable("--" + k)));
        variables.add("KBACKFILL_SINK_PASSWORD");
        assertThat(variables).containsAll(() -> kbackfill.path("environment").fieldNames());
    }
}
