package dev.kbackfill.core.registry;

/** The schema registry could not answer now (unreachable, HTTP 5xx or 429): worth asking again later. */
public final class TransientRegistryException extends RegistryException {
    public TransientRegistryException(String message, Throwable cause) {
        super(message, cause);
    }
}
