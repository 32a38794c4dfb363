package dev.kbackfill.core.registry;

/**
 * The schema registry could not answer: unreachable, timed out, refused the credentials, or failed. Not a
 * property of one record: the run stops (exit 1) with this message rather than skipping records.
 */
public class RegistryException extends RuntimeException {
    public RegistryException(String message, Throwable cause) {
        super(message, cause);
    }
}
