package org.raidfive.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.raidfive.layout.Raid5Algorithm;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code raid completion}: a bash completion script for every verb and option, registered for
 * {@code raid}, {@code ./raid} and the launcher's own path. picocli writes the script; this adds
 * what it cannot know: file names for member lists and FILE/PATH/DIR options, mdadm's layout and
 * policy names, and the ARRAY names of the config file for {@code --array}.
 */
@Command(
        header = "Print a bash completion script.",
        name = "completion",
        mixinStandardHelpOptions = true,
        usageHelpAutoWidth = true,
        description = {
            "Print a bash completion script for raid, ./raid and this launcher's path, with member files, "
                    + "layout and policy names, and the config's array names. Use: source <(raid completion)"
        })
final class CompletionCommand extends Verb {
    /** Picocli's case for an option whose value it cannot complete. */
    private static final String NOTHING = "')\n      return\n      ;;";

    private static final String CONFIG_ARRAYS = """
            # The ARRAY names of the config raid would read (--config FILE on the line, else RAID_CONFIG, else the
            # default paths), for --array.
            function _raid_config_arrays() {
              local f="" i
              for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
                [ "${COMP_WORDS[i]}" = "--config" ] && f="${COMP_WORDS[i+1]}"
              done
              for f in "$f" "${RAID_CONFIG:-}" "${XDG_CONFIG_HOME:-$HOME/.config}/raidfive/raid.conf" /etc/raidfive/raid.conf; do
                if [ -n "$f" ] && [ -f "$f" ]; then
                  awk 'toupper($1) == "ARRAY" { for (i = 2; i <= NF; i++) if ($i !~ /=/) { n = $i; sub(".*/", "", n); print n; break } }' "$f"
                  return
                fi
              done
            }

            """;

    @Override
    public Integer call() {
        out().print(script(spec.root().commandLine(), System.getenv("RAID_LAUNCHER")));
        out().flush();
        return ExitCode.OK;
    }

    /** The script for {@code root}, registered also for {@code launcher} when given. */
    static String script(CommandLine root, String launcher) {
        String s = AutoComplete.bash("raid", root);
        Map<String, String> values = new LinkedHashMap<>();
        List<String> layouts = new ArrayList<>();
        for (Raid5Algorithm a : Raid5Algorithm.values()) {
            layouts.add(a.mdadmName());
        }
        values.put("--layout", words(layouts));
        values.put("--consistency-policy", words(List.of("resync", "bitmap", "ppl")));
        values.put("--bitmap", words(List.of("internal", "none")));
        values.put(
                "--array",
                "      local IFS=$'\\n'\n      COMPREPLY=( $(compgen -W \"$(_raid_config_arrays)\" -- "
                        + "\"${curr_word}\") )\n      return $?\n      ;;");
        for (CommandLine sub : root.getSubcommands().values()) {
            for (OptionSpec o : sub.getCommandSpec().options()) {
                String label = o.paramLabel();
                if (o.arity().max() > 0 && (label.equals("FILE") || label.equals("PATH") || label.equals("DIR"))) {
                    values.putIfAbsent(o.longestName(), FILES);
                }
            }
        }
        for (Map.Entry<String, String> e : values.entrySet()) {
            s = s.replace("    '" + e.getKey() + NOTHING, "    '" + e.getKey() + "')\n" + e.getValue());
            // An enum's values as picocli lists them (RESYNC ...) become the words mdadm uses.
            s = s.replace("(\"RESYNC\" \"BITMAP\" \"PPL\")", "(\"resync\" \"bitmap\" \"ppl\")");
        }
        // A verb's MEMBER words are files (or NBD URIs, typed in full): picocli offers nothing there.
        s = s.replace("""
                    local IFS=$'\\n'
                    COMPREPLY=( $(compgen -W "${commands// /$'\\n'}${IFS}${positionals}" -- "${curr_word}") )
                """, """
                    local IFS=$'\\n'
                    if [ -z "${commands}" ]; then
                      type compopt &>/dev/null && compopt -o filenames
                      COMPREPLY=( $(compgen -f -- "${curr_word}") )
                    else
                      COMPREPLY=( $(compgen -W "${commands// /$'\\n'}${IFS}${positionals}" -- "${curr_word}") )
                    fi
                """);
        String register = "complete -F _complete_raid -o default raid raid.sh raid.bash";
        String names = register + " ./raid" + (launcher == null || launcher.isEmpty() ? "" : " " + quote(launcher));
        int at = s.lastIndexOf(register);
        if (at < 0) {
            throw new IllegalStateException("picocli's completion script no longer ends with: " + register);
        }
        return s.substring(0, at) + CONFIG_ARRAYS + names + s.substring(at + register.length());
    }

    private static final String FILES =
            "      local IFS=$'\\n'\n      type compopt &>/dev/null && compopt -o filenames\n"
                    + "      COMPREPLY=( $( compgen -f -- \"${curr_word}\" ) ) # files\n      return $?\n      ;;";

    private static String words(List<String> w) {
        return "      local IFS=$' \\t\\n'\n      COMPREPLY=( $(compgen -W \"" + String.join(" ", w)
                + "\" -- \"${curr_word}\") )\n" + "      return $?\n      ;;";
    }

    private static String quote(String path) {
        return path.matches("[A-Za-z0-9_./+-]+") ? path : "'" + path.replace("'", "'\\''") + "'";
    }
}
