package dev.kbackfill.resolver;

/**
 * The cluster could not answer a lookup the plan needs (unreachable, timed out, not authorized). Unlike a
 * {@link RequestException} the request may be fine; retrying later may succeed.
 */
public final class ResolutionException extends RuntimeException {
    public ResolutionException(String message, Throwable cause) {
        super(message, cause);
    }
}
