package dev.kbackfill.spark;

/** A Spark job's failure in one line: the first cause that says what went wrong, not Spark's stage bookkeeping. */
final class SparkFailures {

    private SparkFailures() {
    }

    static String describe(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause
                && (cause instanceof org.apache.spark.SparkException || cause.getMessage() == null)) {
            cause = cause.getCause();
        }
        String message = cause.getMessage() == null ? cause.getClass().getName() : cause.getMessage();
        if (cause instanceof org.apache.spark.SparkException) {
            // "Job aborted due to stage failure: Task 0 in stage 1.0 failed 1 times, most recent failure: ... : X"
            int at = message.indexOf("): ");
            if (at > 0) {
                message = message.substring(at + 3);
            }
            int nl = message.indexOf('\n');
            if (nl > 0) {
                message = message.substring(0, nl);
            }
        }
        // "dev.kbackfill.core.run.RunFailure: writing batch ..." when the cause came back as text
        message = message.replaceFirst("^([a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9_$]*(Exception|Failure|Error): ", "");
        // a task's own "stopped with ..." is about its sub-job; the caller says where the job stands
        int stopped = message.indexOf("; stopped with ");
        if (stopped > 0) {
            message = message.substring(0, stopped);
        }
        return message.strip();
    }
}
