package org.raidfive.cli;

import picocli.CommandLine.IVersionProvider;

/** {@code --version}: the Implementation-Version the shaded jar's manifest carries. */
final class ManifestVersion implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = RaidCommand.class.getPackage().getImplementationVersion();
        return new String[] {
            "raid (raidfive) " + (v == null ? "development build" : v),
            "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")"
        };
    }
}
