package dev.kbackfill.embedded;

import java.io.IOException;

/**
 * A broker in a process of its own (for benchmarks, fault injection and tests whose JVM must not hold Kafka's server
 * classes): prints {@code READY host:port} on stdout, then runs until its standard input closes. With a directory
 * argument the broker keeps its data there: a new directory is formatted, one formatted before is started again
 * with the same ports (a broker killed and restarted on the same data).
 */
public final class EmbeddedKafkaProcess {

    private EmbeddedKafkaProcess() {
    }

    public static void main(String[] args) throws IOException {
        java.nio.file.Path dir = args.length > 0 ? java.nio.file.Path.of(args[0]) : null;
        if (dir != null) {
            java.nio.file.Files.createDirectories(dir);
        }
        try (EmbeddedKafka kafka = dir == null ? EmbeddedKafka.start()
                : java.nio.file.Files.exists(dir.resolve("server.properties")) ? EmbeddedKafka.restart(dir)
                : EmbeddedKafka.start(dir, false, java.util.Map.of())) {
            System.out.println("READY " + kafka.bootstrapServers());
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the parent closes our stdin
            }
        }
    }
}
