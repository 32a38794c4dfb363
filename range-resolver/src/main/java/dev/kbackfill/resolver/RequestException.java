package dev.kbackfill.resolver;

/**
 * The request cannot be planned as given: a malformed bound, an unknown zone, topic or partition, {@code from}
 * after {@code to}. The message names the bad value and what is accepted; nothing has been read or written.
 * The command line maps it to exit code 2.
 */
public class RequestException extends RuntimeException {
    public RequestException(String message) {
        super(message);
    }

    public RequestException(String message, Throwable cause) {
        super(message, cause);
    }
}
