package dev.kbackfill.resolver;

/**
 * The request cannot be planned as given: a malformed bound, an unknown zone, topic or partition, {@code from}
 * after {@code to}. The message names the bad value and what is accepted; nothing has been read or written.
 * The command line maps it to exit code 2. The message names the request's settings in {@link Wording#current()}
 * words, or in others with {@link #getMessage(Wording)}.
 */
public class RequestException extends RuntimeException {
    public RequestException(String message) {
        super(message);
    }

    public RequestException(String message, Throwable cause) {
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
