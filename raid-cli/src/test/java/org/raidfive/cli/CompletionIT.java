package org.raidfive.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The script {@code raid completion} prints, sourced into a real bash and driven as readline would
 * drive it: registered for raid, ./raid and the launcher's path; verbs, mdadm's layout, policy and
 * bitmap words, member files and FILE options, and the config's ARRAY names for --array.
 */
@Timeout(120)
class CompletionIT {
    @TempDir
    Path dir;

    @Test
    void bashCompletesVerbsValuesFilesAndArrayNames() throws Exception {
        RaidLauncher.Result r = RaidLauncher.run(dir, "completion");
        assertEquals(0, r.exit(), r.all());
        Files.write(dir.resolve("completion.bash"), r.stdout());
        for (String f : List.of("m0.img", "m1.img", "other.txt")) {
            Files.writeString(dir.resolve(f), "");
        }
        Files.writeString(
                dir.resolve("my.conf"),
                "ARRAY /dev/md/vol0 UUID=0123456789abcdef0123456789abcdef\n"
                        + "ARRAY vol1 name=h:vol1 devices=m0.img\n");
        Files.writeString(dir.resolve("drive.bash"), """
                source ./completion.bash
                compopt() { :; }  # only valid inside a real completion; the words are what is tested
                c() {
                  COMP_LINE="$*"; read -ra COMP_WORDS <<< "$*"
                  [[ "$*" == *" " ]] && COMP_WORDS+=("")
                  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _complete_raid
                  printf '%s|' "$*"; printf '%s\\n' "${COMPREPLY[@]}" | sort | tr '\\n' ' '; echo
                }
                c "./raid zero"
                c "./raid create --layout left"
                c "./raid create --consistency-policy "
                c "raid grow --bitmap n"
                c "./raid detail m"
                c "./raid fail --member o"
                c "./raid detail --config my.conf --array "
                complete -p ./raid raid "$RAID_LAUNCHER_PATH"
                """);
        Tools.Result bash = Tools.run(
                dir,
                Duration.ofSeconds(30),
                List.of("env", "RAID_LAUNCHER_PATH=" + RaidLauncher.LAUNCHER, "bash", "drive.bash"));
        String out = bash.output();
        assertEquals(0, bash.exit(), out);
        assertTrue(out.contains("./raid zero|zero-superblock \n"), out);
        assertTrue(out.contains("./raid create --layout left|left-asymmetric left-symmetric \n"), out);
        assertTrue(out.contains("./raid create --consistency-policy |bitmap ppl resync \n"), out);
        assertTrue(out.contains("raid grow --bitmap n|none \n"), out);
        assertTrue(out.contains("./raid detail m|m0.img m1.img my.conf \n"), out);
        assertTrue(out.contains("./raid fail --member o|other.txt \n"), out);
        assertTrue(out.contains("--array |vol0 vol1 \n"), out);
        for (String name : List.of("./raid", "raid", RaidLauncher.LAUNCHER.toString())) {
            assertTrue(out.contains("complete -o default -F _complete_raid " + name + "\n"), name + ":\n" + out);
        }
    }
}
