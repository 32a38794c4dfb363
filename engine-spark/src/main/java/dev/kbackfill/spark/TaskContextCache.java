package dev.kbackfill.spark;

import java.util.concurrent.ConcurrentHashMap;

import dev.kbackfill.cli.RunArguments;
import dev.kbackfill.cli.SparkJobSpec;

/** What an executor JVM parses once per job: the spec and its command line. */
final class TaskContextCache {

    private static final ConcurrentHashMap<String, SparkJobSpec> SPECS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, RunArguments> ARGUMENTS = new ConcurrentHashMap<>();

    private TaskContextCache() {
    }

    static SparkJobSpec spec(String json) {
        return SPECS.computeIfAbsent(json, SparkJobSpec::fromJson);
    }

    static RunArguments arguments(String specJson) {
        return ARGUMENTS.computeIfAbsent(specJson, j -> RunArguments.parse(spec(j).arguments()));
    }
}
