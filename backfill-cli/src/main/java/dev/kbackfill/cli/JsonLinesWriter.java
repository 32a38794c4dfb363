package dev.kbackfill.cli;

import java.io.PrintWriter;
import java.io.Writer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Standard error under {@code --progress json}: one JSON object per line, nothing else. A line that is a JSON
 * object already (a progress event) passes as it is; any other line (a note, a warning, the line a failure ends
 * with) becomes {@code {"event":"message","level":...,"message":...}}, its level read from its prefix
 * ({@code warning:}, {@code note:}, {@code kbackfill run:} for an error), so that a log collector parses every line.
 */
final class JsonLinesWriter extends Writer {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final PrintWriter out;
    private final StringBuilder line = new StringBuilder();

    private JsonLinesWriter(PrintWriter out) {
        this.out = out;
    }

    /** {@code err} re-encoded line by line. */
    static PrintWriter over(PrintWriter err) {
        return new PrintWriter(new JsonLinesWriter(err), true);
    }

    @Override
    public synchronized void write(char[] buffer, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            char c = buffer[i];
            if (c == '\n') {
                emit();
            } else if (c != '\r') {
                line.append(c);
            }
        }
    }

    private void emit() {
        String text = line.toString();
        line.setLength(0);
        if (text.isBlank()) {
            return;
        }
        if (text.startsWith("{") && text.endsWith("}")) {
            out.println(text);
            return;
        }
        ObjectNode event = JSON.createObjectNode();
        event.put("event", "message");
        String level = "info";
        String message = text;
        if (text.startsWith("warning: ")) {
            level = "warning";
            message = text.substring("warning: ".length());
        } else if (text.startsWith("note: ")) {
            level = "note";
            message = text.substring("note: ".length());
        } else if (text.startsWith("kbackfill ")) {
            level = "error";
        }
        event.put("level", level);
        event.put("message", message);
        out.println(event.toString());
    }

    @Override
    public synchronized void flush() {
        out.flush();
    }

    @Override
    public synchronized void close() {
        if (line.length() > 0) {
            emit();
        }
        out.flush();
    }
}
