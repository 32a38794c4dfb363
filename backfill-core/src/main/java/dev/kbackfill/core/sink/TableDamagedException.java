package dev.kbackfill.core.sink;

/**
 * A file the target table needs is missing, cut short or not what its name says (a data file, a delete file, a
 * manifest, a metadata file): the message names it and what is wrong in one line. Retrying cannot mend it, whatever
 * its cause (an end of file, say) would otherwise suggest.
 */
public class TableDamagedException extends SinkException {
    public TableDamagedException(String message, Throwable cause) {
        super(message, cause);
    }
}
