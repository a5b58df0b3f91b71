package org.raidfive.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The configuration is validated once, with messages that name the value and the rule. */
class NbdServerConfigTest {

    @Test
    void defaults() {
        NbdServerConfig config = NbdServerConfig.builder().build();
        assertEquals("raid", config.exportName());
        assertEquals("127.0.0.1", config.bindAddress());
        assertEquals(10809, config.port());
        assertEquals(null, config.unixSocket());
        assertEquals(32 << 20, config.maxRequestBytes());
        assertEquals(1, config.minimumBlockSize());
        assertEquals(TrimMode.IGNORE, config.trimMode());
        assertTrue(config.writeZeroes());
        assertEquals(false, config.readOnly());
    }

    @Test
    void toBuilderKeepsValues() {
        NbdServerConfig config = NbdServerConfig.builder()
                .exportName("x")
                .readOnly(true)
                .port(0)
                .workerThreads(7)
                .trimMode(TrimMode.ZERO)
                .build();
        assertEquals(config.toString(), config.toBuilder().build().toString());
    }

    @Test
    void badValuesAreNamed() {
        assertRejected(b -> b.port(70000), "70000");
        assertRejected(b -> b.port(-1), "port");
        assertRejected(b -> b.unixSocket(Path.of("/tmp/s")).port(1), "not both");
        assertRejected(b -> b.workerThreads(0), "workerThreads");
        assertRejected(b -> b.minimumBlockSize(3), "power of two");
        assertRejected(b -> b.minimumBlockSize(1 << 17), "131072");
        assertRejected(b -> b.maxRequestBytes(1000), "1000");
        assertRejected(b -> b.minimumBlockSize(4096).maxRequestBytes(4096 * 3 + 512), "multiple");
        assertRejected(b -> b.exportName("a\0b"), "NUL");
        assertRejected(b -> b.exportName("x".repeat(5000)), "4096");
        assertRejected(b -> b.maxInFlightPerConnection(0), "maxInFlightPerConnection");
        assertRejected(b -> b.bindAddress("no-such-host.invalid"), "no-such-host.invalid");
    }

    private static void assertRejected(UnaryOperator<NbdServerConfig.Builder> change, String mention) {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> change.apply(NbdServerConfig.builder()).build());
        assertTrue(e.getMessage().contains(mention), e.getMessage());
    }

    @Test
    void clientConfigValidates() {
        assertThrows(
                IllegalArgumentException.class,
                () -> NbdClientConfig.builder().maxInFlight(0).build());
        assertThrows(
                IllegalArgumentException.class,
                () -> NbdClientConfig.builder()
                        .requestTimeout(java.time.Duration.ZERO)
                        .build());
        assertEquals(64, NbdClientConfig.defaults().maxInFlight());
    }
}
