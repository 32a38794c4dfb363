package dev.kbackfill.cli;

import java.time.ZoneId;

import dev.kbackfill.resolver.BackfillRequest;
import dev.kbackfill.resolver.BoundParser;
import dev.kbackfill.resolver.PartitionFilter;
import org.apache.kafka.common.IsolationLevel;
import picocli.CommandLine.Option;

/** What to backfill: the topic and the two bounds of the range. */
final class RequestOptions {

    @Option(names = "--topic", paramLabel = "TOPIC", description = "The topic to backfill.")
    String topic;

    @Option(names = "--from", paramLabel = "BOUND",
            description = {"Where the range starts (inclusive): earliest or -2, latest or -1, offset:N,",
                    "2024-01-01, 2024-01-01T12:00:00Z,", "2024-01-01T12:00 (in --zone),",
                    "epoch millis (1704067200000), now-1d, -2h, -P1D,",
                    "today, yesterday, today-7d (a day's start in --zone),",
                    "Spark JSON {\"TOPIC\":{\"0\":23,\"1\":-2}},",
                    "where another reader stands: checkpoint:PATH (a Spark query's last",
                    "committed batch), checkpoint-start:PATH (where that query started),",
                    "group:NAME[,earliest|latest|offset:N] (a consumer group, never joined),",
                    "connect:NAME[,...] (a Kafka Connect sink),",
                    "or continue:FIRST (where the job's previous run ended; FIRST, any of these, for its first run)."})
    String from;

    @Option(names = "--to", paramLabel = "BOUND",
            description = "Where the range ends (exclusive); same forms as --from.")
    String to;

    @Option(names = "--zone", paramLabel = "ZONE", defaultValue = "UTC",
            description = "Zone of dates and local date-times (default: ${DEFAULT-VALUE}), for example Europe/Paris.")
    String zone;

    @Option(names = "--partitions", paramLabel = "LIST",
            description = "Only these partitions, e.g. 0,2-5 (default: all, or those named by Spark JSON).")
    String partitions;

    @Option(names = "--allow-data-loss",
            description = "Start at the log start when the range begins below it (records deleted by retention), "
                    + "with a note, instead of failing.")
    boolean allowDataLoss;

    @picocli.CommandLine.Mixin
    ReaderOptions readers;

    /** Whether any of the request options was given (they cannot be combined with a plan file). */
    boolean given() {
        return topic != null || from != null || to != null || partitions != null || readers.given();
    }

    /** Parses the options into a request; a bad value is a {@code RequestException} (exit 2). */
    BackfillRequest toRequest(IsolationLevel isolationLevel) {
        if (topic == null) {
            throw new dev.kbackfill.resolver.RequestException("missing --topic: name the topic to backfill");
        }
        ZoneId zoneId = BoundParser.parseZone(zone);
        BackfillRequest.Builder builder = BackfillRequest.builder(topic).from(from).to(to).zone(zoneId)
                .isolationLevel(isolationLevel).allowDataLoss(allowDataLoss).readers(readers.settings());
        if (partitions != null) {
            builder.partitions(PartitionFilter.parse(partitions));
        }
        return builder.build();
    }
}
