package org.raidfive;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * raid-core's layers, checked by the build. Between packages: the foundations (layout, parity,
 * counter, md, stats, disk) name none of array or nbd, and no two packages form a cycle. Inside
 * {@code array/}: each class is on one layer, lowest first, and a class names only its own layer
 * or lower ones; what it needs from above arrives as an interface at construction.
 */
class LayersTest {
    private static JavaClasses classes;

    @BeforeAll
    static void load() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("org.raidfive");
    }

    @Test
    void foundationsNameNeitherTheArrayNorNbd() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("foundations")
                .definedBy(
                        "org.raidfive.layout..",
                        "org.raidfive.parity..",
                        "org.raidfive.counter..",
                        "org.raidfive.md..",
                        "org.raidfive.stats..",
                        "org.raidfive.disk..")
                .layer("array")
                .definedBy("org.raidfive.array..")
                .layer("nbd")
                .definedBy("org.raidfive.nbd..")
                .whereLayer("array")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("nbd")
                .mayNotBeAccessedByAnyLayer()
                .check(classes);
    }

    @Test
    void packagesFormNoCycle() {
        slices().matching("org.raidfive.(*)..").should().beFreeOfCycles().check(classes);
    }

    /** array/'s layers, lowest first (the picture, with today's classes). */
    static final List<Set<String>> ARRAY_LAYERS = List.of(
            // values: records, enums, exceptions, listener types
            Set.of(
                    "ArrayConfigException",
                    "ArrayFailedException",
                    "ArrayStateException",
                    "MemberState",
                    "SyncAction",
                    "ReAddOutcome",
                    "AssemblyReport",
                    "ConsistencyPolicy",
                    "SyncLimits",
                    "SyncProgress",
                    "SyncOutcome",
                    "ArrayEvent",
                    "ArrayListener",
                    "ArrayStatus",
                    "ArraySpec",
                    "AssembleOptions",
                    "IoStats",
                    "ArrayEvents",
                    "ArrayIdentity",
                    "DeviceId",
                    "PartialParityEntry",
                    "ReshapeState"),
            // members: one member, the table, the stripe locks, member I/O
            Set.of("Member", "MemberTable", "StripeLocks"),
            // ports: what lower layers call upward through
            Set.of("ArrayHooks", "ConsistencyPort"),
            // the stripe engine
            Set.of("ArrayCore", "MemberPhase", "StripeOp", "BadBlockPolicy"),
            // the paths and the consistency policies
            Set.of("ReadPath", "WritePath", "SyncJob", "PplRecovery", "PartialParityLog", "WriteIntentBitmap"),
            // metadata
            Set.of("SuperblockIo", "ArrayMetadata"),
            // conductors
            Set.of("Membership", "Recovery", "OfflineReshape", "ReshapeSpec"),
            // the facade, its live counters (they read the facade's state), the factory, and the
            // array it hands over to while it changes shape
            Set.of(
                    "Raid5Array",
                    "ArrayCounters",
                    "Assembler",
                    "OnlineReshape",
                    "ReshapeCounters",
                    "CountersPublisher"));

    @Test
    void insideArrayAClassNamesOnlyItsLayerOrLowerOnes() {
        Map<String, Integer> layer = new java.util.HashMap<>();
        for (int i = 0; i < ARRAY_LAYERS.size(); i++) {
            for (String c : ARRAY_LAYERS.get(i)) {
                layer.put(c, i);
            }
        }
        Set<String> unplaced = new TreeSet<>();
        Set<String> upward = new TreeSet<>();
        for (JavaClass c : classes) {
            if (!c.getPackageName().equals("org.raidfive.array") || top(c).equals("package-info")) {
                continue;
            }
            String from = top(c);
            if (!layer.containsKey(from)) {
                unplaced.add(from);
                continue;
            }
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass().getBaseComponentType();
                if (!target.getPackageName().equals("org.raidfive.array")) {
                    continue;
                }
                String to = top(target);
                Integer toLayer = layer.get(to);
                if (toLayer != null && !to.equals(from) && toLayer > layer.get(from)) {
                    upward.add(from + " -> " + to);
                }
            }
        }
        assertEquals(Set.of(), unplaced, "array/ classes on no layer: put each on one in ARRAY_LAYERS");
        assertEquals(
                Set.of(),
                upward,
                "references upward in array/ (what a class needs from above arrives as an "
                        + "interface at construction)");
    }

    /**
     * Where more than six arguments stay: the I/O and XOR hot paths, which take buffers, offsets and
     * callbacks as they are so that a request allocates nothing (a value per call would), and the
     * encoder of md's PPL entry, which writes the entry's fields in place.
     */
    static final Set<String> WIDE_ON_PURPOSE = Set.of(
            "org.raidfive.parity.Xor",
            "org.raidfive.parity.Xor$Raw", // XOR kernels: (buffer, offset) pairs
            "org.raidfive.disk.AsyncIo",
            "org.raidfive.disk.AsyncIo$Submitter",
            "org.raidfive.disk.IoThreads",
            "org.raidfive.disk.RingIo", // a request for the io_uring, as IoThreads takes one
            "org.raidfive.disk.FileDisk", // hands that request to the ring as it came
            "org.raidfive.nbd.NbdClient",
            "org.raidfive.nbd.PendingRequest", // one request's fields, per I/O
            "org.raidfive.md.PplHeader");

    /** Arguments above six become a value or a builder (records are the values; synthetic code aside). */
    @Test
    void noMethodOrConstructorTakesMoreThanSixArguments() {
        Set<String> tooMany = new TreeSet<>();
        for (JavaClass c : classes) {
            if (WIDE_ON_PURPOSE.contains(c.getName())) {
                continue;
            }
            for (JavaCodeUnit u : c.getCodeUnits()) {
                boolean canonical = c.isRecord() && u.isConstructor();
                if (u.getRawParameterTypes().size() > 6
                        && !canonical
                        && !u.getModifiers().contains(JavaModifier.SYNTHETIC)
                        && !u.getName().startsWith("lambda$")) {
                    tooMany.add(u.getFullName());
                }
            }
        }
        assertEquals(Set.of(), tooMany, "methods and constructors with more than six arguments");
    }

    /** The top-level class a class belongs to (nested and anonymous classes count as their outermost). */
    private static String top(JavaClass c) {
        String name = c.getName().substring(c.getPackageName().length() + 1);
        int dollar = name.indexOf('$');
        return dollar < 0 ? name : name.substring(0, dollar);
    }
}
