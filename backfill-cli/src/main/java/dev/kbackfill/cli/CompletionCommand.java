package dev.kbackfill.cli;

import java.util.concurrent.Callable;

import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code kbackfill completion bash|zsh}: the shell completion script (picocli's AutoComplete), on stdout. */
@Command(name = "completion", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = {"Print the shell completion script of kbackfill: commands, options, and the values of options "
                + "that take words (modes, formats).",
                "bash:  source <(bin/kbackfill completion bash)",
                "zsh:   source <(bin/kbackfill completion zsh)   (through zsh's bashcompinit)"},
        exitCodeListHeading = "%nExit codes:%n", exitCodeList = {"0:printed", "2:an unknown shell"},
        footerHeading = "%nExamples:%n",
        footer = {"  kbackfill completion bash > /etc/bash_completion.d/kbackfill"})
final class CompletionCommand implements Callable<Integer> {

    enum Shell { bash, zsh }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "SHELL", description = "bash or zsh.")
    Shell shell;

    /** The line that makes {@code kbackfill --topic ...} (the short form of {@code run}) complete as {@code run}. */
    static final String SHORT_FORM = "  # kbackfill --topic ... is kbackfill run --topic ...: complete it as run\n"
            + "  if [ \"${COMP_WORDS[1]:0:1}\" = \"-\" ]; then _picocli_kbackfill_run; return $?; fi\n\n";

    /** picocli's script, completing an option-first command line as {@code run}'s. */
    static String withShortForm(String script) {
        String marker = "  # No subcommands were specified; generate completions for the top-level command.";
        if (!script.contains(marker)) {
            throw new IllegalStateException("picocli's completion script changed: no '" + marker.strip() + "'");
        }
        return script.replace(marker, SHORT_FORM + marker);
    }

    @Override
    public Integer call() {
        CommandLine root = spec.commandLine().getParent();
        // one script serves both: it sets up bashcompinit itself when zsh sources it
        spec.commandLine().getOut().print(withShortForm(AutoComplete.bash("kbackfill", root)));
        spec.commandLine().getOut().flush();
        return ExitCodes.OK;
    }
}
