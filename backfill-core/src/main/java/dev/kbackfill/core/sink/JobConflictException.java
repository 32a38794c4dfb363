package dev.kbackfill.core.sink;

/**
 * The job cannot run: another run holds it, or it was created for a different request or topic. The message says
 * what to do. The command line maps it to exit code 3.
 */
public final class JobConflictException extends RuntimeException {
    public JobConflictException(String message) {
        super(message);
    }
}
