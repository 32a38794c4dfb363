package dev.kbackfill.resolver;

/**
 * The cluster could not answer a lookup the plan needs (unreachable, timed out, not authorized). Unlike a
 * {@link RequestException} the request may be fine; retrying later may succeed.
 */
public final class ResolutionException extends RuntimeException {
    public ResolutionException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The message in {@link Wording#current()} words. */
    @Override
    public String getMessage() {
        return Wording.current().render(super.getMessage());
    }

    /** The message with the request's settings named in {@code wording}. */
    public String getMessage(Wording wording) {
        return wording.render(super.getMessage());
    }
}
