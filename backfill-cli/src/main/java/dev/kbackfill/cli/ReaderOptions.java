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

    @Option(names = "--archive", paramLabel = "URL",
            description = {"Where a Kafka Connect S3 sink archived the topic",
                    "(a folder, file:///PATH or s3a://BUCKET/PREFIX;",
                    "Confluent's or Aiven's layout): a range may start",
                    "below the log start, its older part read from the",
                    "archive with the topic's own offsets."})
    String archive;

    @Option(names = "--allow-inferred-offsets",
            description = {"With --archive in Confluent's layout, whose records",
                    "carry no offsets: read them at their file's start",
                    "offset plus their index, which holds only where the",
                    "archived log had no gaps (not compacted, no",
                    "transactions)."})
    boolean allowInferredOffsets;

    @Option(names = "--archive-fields", paramLabel = "FIELD,...",
            description = {"With --archive holding Aiven's CSV files: their",
                    "fields in order, as the connector's",
                    "format.output.fields gave them (of key, value,",
                    "offset, timestamp, headers), e.g. key,value,offset."})
    String archiveFields;

    /** The request's reader settings ({@link BackfillRequest#readers()}). */
    Map<String, String> settings() {
        Map<String, String> settings = new TreeMap<>();
        if (checkpointProperties != null) {
            settings.putAll(checkpointProperties);
        }
        if (connectUrl != null) {
            settings.put(BackfillRequest.CONNECT_URL, connectUrl);
        }
        if (archive != null) {
            settings.put(BackfillRequest.ARCHIVE_URL, archive);
        }
        if (allowInferredOffsets) {
            settings.put(BackfillRequest.ARCHIVE_INFERRED_OFFSETS, "true");
        }
        if (archiveFields != null) {
            settings.put(BackfillRequest.ARCHIVE_FIELDS, archiveFields);
        }
        return settings;
    }

    boolean given() {
        return connectUrl != null || checkpointProperties != null || archive != null || allowInferredOffsets
                || archiveFields != null;
    }
}
