package dev.kbackfill.cli;

import picocli.CommandLine;

/** {@code --version}: the version in the jar manifest. */
final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String version = Kbackfill.class.getPackage().getImplementationVersion();
        return new String[] {"kbackfill " + (version == null ? "(development build, not from a jar)" : version)};
    }
}
