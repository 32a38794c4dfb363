package dev.kbackfill.cli;

import java.util.Map;
import java.util.TreeMap;

import dev.kbackfill.resolver.BackfillRequest;
import picocli.CommandLine.Option;

/** How to reach the readers that {@code checkpoint:} and {@code connect:} bounds name. */
final class ReaderOptions {

    @Option(names = "--connect-url", paramLabel = "URL",
            description = {"With connect:NAME: the Kafka Connect worker's",
                    "REST address (http://HOST:PORT); the sink's",
                    "offsets come from its GET /connectors/NAME/offsets",
                    "(Kafka 3.5+), whatever its group is called.",
                    "Without it, connect:NAME reads connect-NAME's group."})
    String connectUrl;

    @Option(names = "--checkpoint-property", paramLabel = "KEY=VALUE",
            description = "With checkpoint:s3a://... (or s3://, hdfs://): a setting of the checkpoint's "
                    + "filesystem (repeatable), e.g. fs.s3a.endpoint=URL; credentials come from the environment "
                    + "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS's default chain).")
    Map<String, String> checkpointProperties;

    /** The request's reader settings ({@link BackfillRequest#readers()}). */
    Map<String, String> settings() {
        Map<String, String> settings = new TreeMap<>();
        if (checkpointProperties != null) {
            settings.putAll(checkpointProperties);
        }
        if (connectUrl != null) {
            settings.put(BackfillRequest.CONNECT_URL, connectUrl);
        }
        return settings;
    }

    boolean given() {
        return connectUrl != null || checkpointProperties != null;
    }
}
