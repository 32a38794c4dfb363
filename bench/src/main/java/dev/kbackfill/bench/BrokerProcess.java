package dev.kbackfill.bench;

import java.io.IOException;

import dev.kbackfill.embedded.EmbeddedKafka;

/** A broker in a process of its own: prints {@code READY host:port}, runs until its standard input closes. */
public final class BrokerProcess {

    private BrokerProcess() {
    }

    public static void main(String[] args) throws IOException {
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            System.out.println("READY " + kafka.bootstrapServers());
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the parent to close our stdin
            }
        }
    }
}
