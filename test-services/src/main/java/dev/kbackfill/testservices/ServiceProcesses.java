package dev.kbackfill.testservices;

import java.util.concurrent.TimeUnit;

/** What the shared services do with the processes they start. */
final class ServiceProcesses {

    private ServiceProcesses() {
    }

    /**
     * Stops {@code process} when this JVM exits: asked to stop, given {@code graceSeconds}, then killed; then
     * {@code after} runs (cleanup of its files).
     */
    static void stopAtExit(Process process, String name, int graceSeconds, Runnable after) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            process.destroy();
            try {
                process.waitFor(graceSeconds, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.destroyForcibly();
            after.run();
        }, name + "-shutdown"));
    }
}
