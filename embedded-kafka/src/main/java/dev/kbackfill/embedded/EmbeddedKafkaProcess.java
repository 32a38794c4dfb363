package dev.kbackfill.embedded;

import java.io.IOException;

/**
 * A broker in a process of its own (for benchmarks and for tests whose JVM must not hold Kafka's server classes):
 * prints {@code READY host:port} on stdout, then runs until its standard input closes.
 */
public final class EmbeddedKafkaProcess {

    private EmbeddedKafkaProcess() {
    }

    public static void main(String[] args) throws IOException {
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            System.out.println("READY " + kafka.bootstrapServers());
            System.out.flush();
            while (System.in.read() >= 0) {
                // until the parent closes our stdin
            }
        }
    }
}
