package dev.kbackfill.cli;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.jar.JarFile;

/**
 * The lake libraries: the Delta and Iceberg sinks with Hadoop, Parquet and the cloud storage clients, and the
 * demo's embedded broker. {@code kbackfill.jar}'s Class-Path leaves them out and {@code kbackfill-lake.jar}'s names
 * them (both in {@code backfill-cli/target}, the libraries in {@code lib/}): a command into a database or Kafka
 * starts without them, because every services lookup on the class path (the JDK's own among them) opens each jar on
 * it, and with all 180 that took 50-70 ms of a cron run's start. {@code bin/kbackfill} gives a command for any other
 * sink both jars. A command that finds it needs them later (a lake sink named only in a settings file, an archive
 * or a checkpoint on S3, the demo's broker) has them added here ({@link dev.kbackfill.resolver.OptionalLibraries}),
 * through the {@link Instrumentation} that {@code java -jar kbackfill.jar} hands this class as the jar's
 * {@code Launcher-Agent-Class} before {@code main}. Added to the application class loader, they are found as if
 * they had been there from the start: by class name, by the services scan, by Hadoop's and Iceberg's lookups
 * through the thread's context class loader.
 */
public final class LakeLibraries {

    /** The manifest-only jar whose Class-Path names the lake libraries, beside {@code kbackfill.jar}. */
    static final String LAKE_JAR = "kbackfill-lake.jar";

    private static volatile Instrumentation instrumentation;
    private static boolean added;

    private LakeLibraries() {
    }

    /** Started by {@code java -jar kbackfill.jar} before {@code main} (the manifest's Launcher-Agent-Class). */
    public static void agentmain(String arguments, Instrumentation given) {
        instrumentation = given;
    }

    /**
     * Makes the lake libraries loadable, if they are not: nothing where they were on the class path from the start
     * (with kbackfill-lake.jar, or every library as in the image) or this class is not in a jar (tests), else
     * {@code kbackfill-lake.jar} added to the class path.
     *
     * @throws CliFailure where it would be added but cannot be: missing, or no way to add it
     */
    static synchronized void add() {
        if (added) {
            return;
        }
        Path jar = ownJar();
        if (jar == null) {
            added = true;
            return;
        }
        Path lake = jar.resolveSibling(LAKE_JAR);
        if (onClassPath(lake, System.getProperty("java.class.path", "")) || onClassPathAlready()) {
            added = true; // given with kbackfill.jar, or every library on one class path (the image)
            return;
        }
        if (!Files.isRegularFile(lake)) {
            throw new CliFailure("the lake libraries are missing: no " + lake + " beside " + jar.getFileName()
                    + " (the Delta and Iceberg sinks and the demo's broker need it and the lib/ directory it names)",
                    null);
        }
        Instrumentation adding = instrumentation;
        if (adding == null) {
            throw new CliFailure("the lake libraries are not on the class path: start kbackfill with bin/kbackfill "
                    + "or java -jar " + jar + ", or add " + lake + " to -cp", null);
        }
        try {
            adding.appendToSystemClassLoaderSearch(new JarFile(lake.toFile()));
        } catch (IOException e) {
            throw new CliFailure("cannot read the lake libraries' " + lake + ": " + e.getMessage(), e);
        }
        added = true;
    }

    /** Whether the lake's modules are on the class path without kbackfill-lake.jar: the demo's broker, the sinks. */
    private static boolean onClassPathAlready() {
        ClassLoader loader = LakeLibraries.class.getClassLoader();
        return loader.getResource("dev/kbackfill/embedded/EmbeddedKafka.class") != null
                && loader.getResource("dev/kbackfill/sink/lake/HadoopArchiveStore.class") != null;
    }

    /** The jar this class was loaded from, or null where it is not a jar (classes in a directory). */
    private static Path ownJar() {
        CodeSource source = LakeLibraries.class.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return null;
        }
        try {
            Path path = Path.of(source.getLocation().toURI());
            return Files.isRegularFile(path) ? path : null;
        } catch (URISyntaxException | IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether {@code jar} is one of the class path's entries (as given, or the same file). */
    static boolean onClassPath(Path jar, String classPath) {
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            try {
                Path p = Path.of(entry);
                if (p.toAbsolutePath().normalize().equals(jar.toAbsolutePath().normalize())
                        || (Files.exists(p) && Files.exists(jar) && Files.isSameFile(p, jar))) {
                    return true;
                }
            } catch (IOException | java.nio.file.InvalidPathException e) {
                // an entry that is no path of this machine is not the jar
            }
        }
        return false;
    }
}
