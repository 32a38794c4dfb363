package dev.kbackfill.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.kbackfill.core.record.RecordDecoder;
import dev.kbackfill.core.run.BackfillJob;
import dev.kbackfill.core.run.Rejects;
import dev.kbackfill.core.sink.SinkSettings;
import dev.kbackfill.resolver.Plan;
import picocli.CommandLine;

/**
 * A {@code run} command line, parsed as the command parses it, for code that runs part of a job elsewhere: the
 * Spark engine's tasks build their sink, decoder and settings from the job's command line, so that a task writes
 * exactly as {@code kbackfill run} would.
 */
public final class RunArguments {

    private final RunCommand command;

    private RunArguments(RunCommand command) {
        this.command = command;
    }

    /** @param args a {@code run} command line, with or without the leading {@code run} */
    public static RunArguments parse(List<String> args) {
        List<String> a = new ArrayList<>(args);
        if (!a.isEmpty() && a.get(0).equals("run")) {
            a.remove(0);
        }
        RunCommand command = new RunCommand();
        new CommandLine(command).parseArgs(a.toArray(String[]::new));
        return new RunArguments(command);
    }

    /** The Kafka client settings. */
    public Map<String, Object> kafkaConfig() {
        return command.kafka.clientConfig();
    }

    public SinkSettings sinkSettings(String topic) {
        return command.sink.settings(topic, kafkaConfig());
    }

    public RecordDecoder decoder() {
        return command.decoder();
    }

    /** A new policy for records that cannot be decoded (to close after use). */
    public Rejects rejects() {
        return command.rejects(kafkaConfig());
    }

    /** The job's settings for running {@code plan} with {@code rejects}, as the command line would. */
    public BackfillJob.Builder jobBuilder(Plan plan, Rejects rejects) {
        Map<String, Object> config = kafkaConfig();
        return command.jobBuilder(plan.request(), config, command.decoder(), command.sink.settings(plan.topic(), config),
                rejects, command.retryDuration()).plan(plan);
    }
}
