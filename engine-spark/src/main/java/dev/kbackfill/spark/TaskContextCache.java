package dev.kbackfill.spark;

import java.util.concurrent.ConcurrentHashMap;

import dev.kbackfill.core.engine.SparkJobSpec;
import dev.kbackfill.core.run.JobDefinition;

/** What an executor JVM parses once per job: the spec, and the job it holds. */
final class TaskContextCache {

    private static final ConcurrentHashMap<String, SparkJobSpec> SPECS = new ConcurrentHashMap<>();

    private TaskContextCache() {
    }

    static SparkJobSpec spec(String json) {
        return SPECS.computeIfAbsent(json, SparkJobSpec::fromJson);
    }

    /** The job, with its name and frozen plan: what a task builds its sink, decoder and settings from. */
    static JobDefinition job(String specJson) {
        return spec(specJson).job();
    }
}
