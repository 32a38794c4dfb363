package dev.kbackfill.cli;

/** A runtime failure the command line reports in one line, with exit code 1. */
final class CliFailure extends RuntimeException {
    CliFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
