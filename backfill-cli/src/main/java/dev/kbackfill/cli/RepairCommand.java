package dev.kbackfill.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kbackfill repair}: verify, then write the range's final state for exactly the keys found wrong, in one
 * transaction or commit, and judge them again. Takes verify's forms and options.
 */
@Command(name = "repair", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = {"Verify a range (as 'kbackfill verify' does, with its forms and options), then fix exactly the "
                + "keys found wrong: a missing key inserted, a stale or different row replaced by the range's last "
                + "record, an extra row deleted, all in one transaction or commit of the sink, as a job of its own "
                + "(NAME-repair, or repair-TOPIC-HASH for a range); then judge those keys again.",
                "A row whose version is newer than the range's, or claims one the log no longer holds, is never "
                        + "written; beside a live writer, a key with a newer record in the log after the range is the "
                        + "live writer's. Results go to stdout, notes to stderr."},
        customSynopsis = {"kbackfill repair --job NAME --sink URL [--dry-run] [OPTIONS]",
                "       kbackfill repair --topic TOPIC --from BOUND --to BOUND --sink URL [--dry-run] [OPTIONS]",
                "       kbackfill repair --plan FILE --sink URL [--dry-run] [OPTIONS]"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:the target agrees now (or, with --dry-run, already did)",
                "1:runtime failure (the source or the target could not be read or written; nothing was written)",
                "2:bad input (nothing was read)",
                "3:the job runs elsewhere (its lock is held)",
                "4:keys are still wrong (or, with --dry-run, would be repaired)"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill repair --job orders-hourly --sink jdbc:postgresql://db.internal/app --dry-run",
                "  kbackfill repair --job orders-hourly --sink jdbc:postgresql://db.internal/app",
                "  kbackfill repair --topic orders --from 2024-01-01 --to 2024-01-02 \\",
                "      --sink delta:/data/lake/orders --format json"})
final class RepairCommand extends VerifyCommand {

    @Option(names = "--dry-run", description = "Say which keys the repair would insert, replace or delete, and "
            + "write nothing.")
    boolean dryRun;

    @Override
    boolean repairing() {
        return true;
    }

    @Override
    boolean dryRun() {
        return dryRun;
    }
}
