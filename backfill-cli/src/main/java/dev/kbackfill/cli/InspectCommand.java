package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.resolver.Bound;
import dev.kbackfill.resolver.BoundParser;
import dev.kbackfill.resolver.KafkaOffsetSource;
import dev.kbackfill.resolver.Note;
import dev.kbackfill.resolver.ReaderPositions;
import dev.kbackfill.resolver.RequestException;
import dev.kbackfill.resolver.TopicInfo;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kbackfill inspect}: where another reader of a topic stands (a Spark checkpoint's query, a consumer group,
 * a Kafka Connect sink) against the topic's log, read without joining or changing anything: what it has not read,
 * and what retention took before it could.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = {"Show where another reader of a topic stands, per partition, against the log: a Spark "
                + "Structured Streaming checkpoint (where its query stopped, or started), a consumer group or a Kafka "
                + "Connect sink's committed offsets. Reads files and offsets only: no group is joined, nothing is "
                + "committed or written.",
                "The same forms are bounds of plan, run and verify: --from checkpoint:PATH --to latest backfills "
                        + "what the query has not processed."},
        customSynopsis = "kbackfill inspect READER [READER] [--topic TOPIC] [OPTIONS]",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:shown", "1:the cluster failed or did not answer",
                "2:bad input (the reader form, a checkpoint that cannot be read, a group without offsets)"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill inspect checkpoint:/chk/orders-etl",
                "  kbackfill inspect group:orders-etl,earliest --topic orders --format json",
                "  kbackfill inspect connect:orders-sink --connect-url http://connect:8083",
                "  kbackfill inspect checkpoint:/chk/old checkpoint-start:/chk/new",
                "  kbackfill plan --topic orders --from checkpoint:/chk/old \\",
                "      --to checkpoint-start:/chk/new"})
final class InspectCommand implements Callable<Integer> {

    enum Format { table, json }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Parameters(arity = "0..2", paramLabel = "READER",
            description = {"Where a reader stands:",
                    "checkpoint:PATH (where a Spark query stopped:",
                    "its last committed batch),",
                    "checkpoint-start:PATH (where it started),",
                    "group:NAME[,earliest|latest] (a consumer group),",
                    "connect:NAME[,earliest|latest] (a Connect sink).",
                    "A second READER is one that took over: per",
                    "partition the gap neither read and the overlap",
                    "both read, with the run that fills the gap."})
    java.util.List<String> readers;

    @Option(names = "--topic", paramLabel = "TOPIC",
            description = "The topic the reader reads; needed only when the reader has positions on several topics.")
    String topic;

    @Option(names = "--at", paramLabel = "READER", description = "The first READER, given as an option.")
    String at;

    @Option(names = "--then", paramLabel = "READER", description = "The second READER, given as an option.")
    String then;

    @Mixin
    ReaderOptions readerOptions;

    @Mixin
    KafkaOptions kafka;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
            description = "table (default) or json.")
    Format format;

    @Option(names = "--chart", paramLabel = "FILE",
            description = "Also draw the positions to FILE (.svg, or .html for a page): per partition the log, what "
                    + "the reader has not read and what retention took; for two readers the gap and the overlap.")
    java.nio.file.Path chartFile;

    /** The chart's rows, when {@code --chart} asked for one. */
    private final java.util.List<Timeline.Row> chartRows = new java.util.ArrayList<>();

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (readers != null && !readers.isEmpty()) {
            if (at != null || then != null) {
                throw new RequestException("invalid READER '" + readers.get(0) + "': give the readers as arguments or "
                        + "as --at and --then, not both");
            }
            at = readers.get(0);
            then = readers.size() > 1 ? readers.get(1) : null;
            // notes and messages in the words the user typed: the readers were arguments, not options
            atWords = "READER";
            thenWords = "second READER";
        }
        AtomicFile.checkWritable(spec.commandLine(), "--chart", chartFile);
        if (at == null) {
            throw new RequestException("missing READER: name where a reader stands, e.g. kbackfill inspect "
                    + "checkpoint:PATH, group:NAME or connect:NAME");
        }
        // a bare checkpoint path as the bound it is, so that the command printed runs as printed
        at = asBound(at);
        then = asBound(then);
        Bound.External reader = reader(atWords, at);
        if (then != null) {
            return handOver(out, err, reader, reader(thenWords, then));
        }
        return alone(out, err, reader);
    }

    /** Where one reader stands: per partition what it has not read, and what retention took before it could. */
    private int alone(PrintWriter out, PrintWriter err, Bound.External reader) {
        Log log = read(reader);
        ReaderPositions.Materialized m = log.readers().get(0);
        Map<Integer, Long> logStart = log.logStart();
        Map<Integer, Long> end = log.end();
        long behind = 0;
        long lost = 0;
        ArrayNode json = new ObjectMapper().createArrayNode();
        if (format == Format.table) {
            out.printf("%9s  %12s  %12s  %12s  %12s  %12s%n", "PARTITION", "POSITION", "LOG START", "END", "BEHIND",
                    "LOST");
        }
        for (Map.Entry<Integer, Bound> e : m.bound().positions().entrySet()) {
            int p = e.getKey();
            long start = logStart.get(p);
            long last = end.get(p);
            long position = offset(e.getValue(), start, last);
            long partitionLost = Math.max(0, Math.min(start, last) - position);
            long partitionBehind = Math.max(0, last - Math.max(position, start));
            behind += partitionBehind;
            lost += partitionLost;
            chartRows.add(new Timeline.Row(p, start, last, spans(new Timeline.Span(position, Math.min(start, last),
                    Timeline.Kind.LOST), new Timeline.Span(Math.max(position, start), last, Timeline.Kind.BEHIND)),
                    java.util.List.of(new Timeline.Mark(position, "reader")), String.format(java.util.Locale.ROOT,
                    "behind %,d, lost %,d", partitionBehind, partitionLost)));
            if (format == Format.table) {
                out.printf("%9d  %,12d  %,12d  %,12d  %,12d  %,12d%n", p, position, start, last, partitionBehind,
                        partitionLost);
            } else {
                ObjectNode n = json.addObject().put("partition", p).put("position", position).put("logStart", start)
                        .put("end", last).put("behind", partitionBehind).put("lost", partitionLost);
                ArrayNode notes = n.putArray("notes");
                m.partitionNotes().getOrDefault(p, java.util.List.of()).forEach(x -> notes.add(x.message()));
            }
        }
        chart("inspect of " + at + " on " + topic + String.format(java.util.Locale.ROOT, ": %,d behind, %,d lost",
                behind, lost), err);
        if (format == Format.table) {
            out.printf("%9s  %12s  %12s  %12s  %,12d  %,12d%n", "total", "", "", "", behind, lost);
            out.println("'kbackfill --topic " + topic + " --from " + Kbackfill.shellWord(at) + readerFlags()
                    + " --to latest' backfills"
                    + " the " + String.format("%,d", behind) + " records behind"
                    + (lost > 0 ? "; " + String.format("%,d", lost) + " records below the log start are gone (retention)"
                    : ""));
        } else {
            ObjectNode root = new ObjectMapper().createObjectNode();
            root.put("topic", topic).put("reader", at).put("behind", behind).put("lost", lost);
            root.set("partitions", json);
            ArrayNode notes = root.putArray("notes");
            m.notes().forEach(x -> notes.add(x.message()));
            out.println(root);
        }
        out.flush();
        if (format == Format.table) {
            for (Note n : m.notes()) {
                err.println("note: " + n.message());
            }
        }
        err.flush();
        return ExitCodes.OK;
    }

    /** How the first and second readers are named in notes and messages: as options, or as the arguments they were. */
    private String atWords = "--at";
    private String thenWords = "--then";

    /** A reader as given (a bare checkpoint path already made {@code checkpoint:PATH}). */
    private static Bound.External reader(String option, String text) {
        Bound bound = BoundParser.parse(option, text, java.time.ZoneOffset.UTC);
        if (!(bound instanceof Bound.External reader)) {
            throw new RequestException("invalid " + option + " '" + text + "': expected a reader, checkpoint:PATH, "
                    + "checkpoint-start:PATH, group:NAME[,earliest|latest] or connect:NAME[,earliest|latest]");
        }
        return reader;
    }

    /** A reader's text as a bound: a bare checkpoint directory as {@code checkpoint:PATH}, else as given. */
    private static String asBound(String text) {
        java.nio.file.Path bare = bareCheckpoint(text);
        return bare != null ? "checkpoint:" + bare : text;
    }

    /**
     * The checkpoint directory {@code text} names without a prefix, if it names one on this machine: a directory
     * holding {@code offsets/} or {@code metadata}, as a Spark query's checkpoint does.
     */
    private static java.nio.file.Path bareCheckpoint(String text) {
        if (text == null || text.isBlank() || text.contains(":") && !text.startsWith("/")) {
            return null;
        }
        try {
            java.nio.file.Path dir = java.nio.file.Path.of(text);
            boolean checkpoint = java.nio.file.Files.isDirectory(dir.resolve("offsets"))
                    || java.nio.file.Files.isRegularFile(dir.resolve("metadata"));
            return java.nio.file.Files.isDirectory(dir) && checkpoint ? dir : null;
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
    }

    /** Where {@code before} stopped against where {@code after} started: the gap neither read, the overlap both did. */
    private int handOver(PrintWriter out, PrintWriter err, Bound.External before, Bound.External after) {
        Log log = read(before, after);
        ReaderPositions.Materialized old = log.readers().get(0);
        ReaderPositions.Materialized fresh = log.readers().get(1);
        Map<Integer, Long> logStart = log.logStart();
        Map<Integer, Long> end = log.end();
        long gap = 0;
        long overlap = 0;
        long lost = 0;
        ArrayNode json = new ObjectMapper().createArrayNode();
        if (format == Format.table) {
            out.printf("%9s  %12s  %12s  %12s  %12s  %12s%n", "PARTITION", "STOPPED", "RESTARTED", "GAP", "OVERLAP",
                    "LOST");
        }
        for (int p : old.bound().positions().keySet()) {
            long start = logStart.get(p);
            long last = end.get(p);
            long stopped = offset(old.bound().positions().get(p), start, last);
            long restarted = offset(fresh.bound().positions().get(p), start, last);
            long partitionGap = Math.max(0, restarted - Math.max(stopped, start));
            long partitionLost = Math.max(0, Math.min(start, restarted) - stopped);
            long partitionOverlap = Math.max(0, stopped - Math.max(restarted, start));
            gap += partitionGap;
            overlap += partitionOverlap;
            lost += partitionLost;
            chartRows.add(new Timeline.Row(p, start, last, spans(
                    new Timeline.Span(stopped, Math.min(start, restarted), Timeline.Kind.LOST),
                    new Timeline.Span(Math.max(stopped, start), restarted, Timeline.Kind.GAP),
                    new Timeline.Span(Math.max(restarted, start), stopped, Timeline.Kind.OVERLAP)),
                    java.util.List.of(new Timeline.Mark(stopped, "stopped"), new Timeline.Mark(restarted, "restarted")),
                    String.format(java.util.Locale.ROOT, "gap %,d, overlap %,d, lost %,d", partitionGap,
                            partitionOverlap, partitionLost)));
            if (format == Format.table) {
                out.printf("%9d  %,12d  %,12d  %,12d  %,12d  %,12d%n", p, stopped, restarted, partitionGap,
                        partitionOverlap, partitionLost);
            } else {
                json.addObject().put("partition", p).put("stopped", stopped).put("restarted", restarted)
                        .put("gap", partitionGap).put("overlap", partitionOverlap).put("lost", partitionLost);
            }
        }
        chart("inspect of " + at + " then " + then + " on " + topic + String.format(java.util.Locale.ROOT,
                ": gap %,d, overlap %,d, lost %,d", gap, overlap, lost), err);
        String fill = "kbackfill run --topic " + topic + " --from " + Kbackfill.shellWord(at) + " --to "
                + Kbackfill.shellWord(then) + readerFlags() + " --sink URL";
        if (format == Format.table) {
            out.printf("%9s  %12s  %12s  %,12d  %,12d  %,12d%n", "total", "", "", gap, overlap, lost);
            out.println(gap > 0 ? "'" + fill + "' writes the " + String.format("%,d", gap) + " records neither read"
                    : "no record was left unread between the two");
            if (overlap > 0) {
                out.println(String.format("%,d", overlap) + " records were read by both: an appending sink holds them "
                        + "twice (an upsert by key, once)");
            }
        } else {
            ObjectNode root = new ObjectMapper().createObjectNode();
            root.put("topic", topic).put("stopped", at).put("restarted", then).put("gap", gap).put("overlap", overlap)
                    .put("lost", lost).put("fill", gap > 0 ? fill : null);
            root.set("partitions", json);
            out.println(root);
        }
        out.flush();
        if (format == Format.table) {
            old.notes().forEach(n -> err.println("note: " + n.message()));
            fresh.notes().forEach(n -> err.println("note: " + n.message()));
        }
        err.flush();
        return ExitCodes.OK;
    }

    /** The spans that hold offsets. */
    private static java.util.List<Timeline.Span> spans(Timeline.Span... all) {
        return java.util.Arrays.stream(all).filter(s -> s.to() > s.from()).toList();
    }

    /** Draws the chart, when asked for one. */
    private void chart(String title, PrintWriter err) {
        if (chartFile == null) {
            return;
        }
        new Timeline(title, "read by kbackfill inspect at " + java.time.Instant.now(), chartRows).draw(chartFile);
        err.println("chart drawn in " + chartFile);
    }

    /** Where each reader stands ({@code --at} first, then {@code --then}), and the log's start and end offsets. */
    private record Log(java.util.List<ReaderPositions.Materialized> readers, Map<Integer, Long> logStart,
                       Map<Integer, Long> end) {
    }

    private Log read(Bound.External... readers) {
        // checked before any cluster (the default one included) is named
        Map<String, String> settings = dev.kbackfill.resolver.BackfillRequest.checkedReaders(readerOptions.settings());
        Map<String, Object> config = kafka.clientConfig();
        try (KafkaOffsetSource source = KafkaOffsetSource.create(config)) {
            if (topic == null) {
                topic = onlyTopic(readers[0], source, settings);
            }
            TopicInfo info = source.describe(topic);
            Map<Integer, Long> ends = source.endOffsets(topic, info.partitions(),
                    org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED);
            java.util.List<ReaderPositions.Materialized> positions = new java.util.ArrayList<>();
            for (int i = 0; i < readers.length; i++) {
                String option = i == 0 ? atWords : thenWords;
                ReaderPositions.Materialized m = ReaderPositions.resolve(option, readers[i], info, source, settings);
                ReaderPositions.requireWithinLog(option, readers[i], m, topic, ends);
                positions.add(m);
            }
            Map<Integer, Long> starts = new java.util.TreeMap<>(source.logStartOffsets(topic, info.partitions()));
            if (readerOptions.archive != null) {
                // offsets retention deleted that the archive holds, reaching the log start, are not lost
                dev.kbackfill.core.read.archive.ConnectorArchive.open(readerOptions.archive, settings)
                        .extents(topic, info.partitions()).forEach((p, e) -> starts.computeIfPresent(p,
                                (k, s) -> e.first() < s && e.end() >= s ? e.first() : s));
            }
            return new Log(positions, starts, source.endOffsets(topic, info.partitions(),
                    kafka.isolationLevel(config)));
        }
    }

    /** The one topic {@code reader} has positions on, for a command line that names none. */
    private String onlyTopic(Bound.External reader, KafkaOffsetSource source, Map<String, String> settings) {
        java.util.SortedSet<String> topics = ReaderPositions.topics(reader, source, settings);
        if (topics.size() == 1) {
            return topics.first();
        }
        throw new RequestException(topics.isEmpty()
                ? "'" + at + "' has no position on any topic: name the topic with --topic TOPIC"
                : "'" + at + "' has positions on topics " + String.join(", ", topics) + ": name one with --topic TOPIC");
    }

    /**
     * The options that reach the cluster and the readers, as a command line that uses the same bounds needs them (the
     * cluster's where given on this command line).
     */
    private String readerFlags() {
        StringBuilder flags = new StringBuilder();
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        if (parsed != null && parsed.hasMatchedOption("--bootstrap-server")) {
            flags.append(" --bootstrap-server ").append(Kbackfill.shellWord(kafka.bootstrapServers));
        }
        if (parsed != null && parsed.hasMatchedOption("--command-config")) {
            flags.append(" --command-config ").append(Kbackfill.shellWord(kafka.commandConfig.toString()));
        }
        if (readerOptions.connectUrl != null) {
            flags.append(" --connect-url ").append(Kbackfill.shellWord(readerOptions.connectUrl));
        }
        if (readerOptions.checkpointProperties != null) {
            readerOptions.checkpointProperties.forEach((k, v) -> flags.append(" --checkpoint-property ")
                    .append(Kbackfill.shellWord(k + "=" + v)));
        }
        // a gap below the log start is read from the archive given here, as the backfill command will need it
        if (readerOptions.archive != null) {
            flags.append(" --archive ").append(Kbackfill.shellWord(readerOptions.archive));
        }
        if (readerOptions.allowInferredOffsets) {
            flags.append(" --allow-inferred-offsets");
        }
        if (readerOptions.archiveFields != null) {
            flags.append(" --archive-fields ").append(Kbackfill.shellWord(readerOptions.archiveFields));
        }
        return flags.toString();
    }

    /** A reader's position as an offset: a fallback of earliest or latest is the log's start or end. */
    private static long offset(Bound b, long logStart, long end) {
        return b instanceof Bound.AtOffset o ? o.offset() : b instanceof Bound.Latest ? end : logStart;
    }
}
