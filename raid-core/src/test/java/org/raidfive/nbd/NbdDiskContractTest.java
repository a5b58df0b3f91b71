package org.raidfive.nbd;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemberDiskContract;
import org.raidfive.disk.MemoryDisk;

/** The one {@link MemberDiskContract}, over NbdDisk against our server (TCP, Unix socket, connection-thread mode) and nbdkit. */
final class NbdDiskContractTest {
    private NbdDiskContractTest() {}

    /** Runs our server over a fresh MemoryDisk per disk the contract asks for; stops them after each test. */
    abstract static class OverOurServer extends MemberDiskContract {
        private final List<NbdServer> servers = new ArrayList<>();

        @TempDir
        Path tmp;

        abstract NbdServerConfig config(int index);

        @Override
        protected MemberDisk create(long size) throws IOException {
            NbdServer server = NbdServer.start(new MemoryDisk(size), config(servers.size()));
            servers.add(server);
            return NbdDisk.open(server.uri());
        }

        @AfterEach
        void stopServers() throws IOException {
            for (NbdServer s : servers) {
                s.close();
                s.disk().close();
            }
        }
    }

    static final class OverOurServerTcpTest extends OverOurServer {
        @Override
        NbdServerConfig config(int index) {
            return NbdServerConfig.builder().port(0).build();
        }
    }

    static final class OverOurServerUnixSocketTest extends OverOurServer {
        @Override
        NbdServerConfig config(int index) {
            return NbdServerConfig.builder()
                    .unixSocket(tmp.resolve("raid" + index + ".sock"))
                    .workerThreads(2)
                    .build();
        }
    }

    static final class OverOurServerOnConnectionThreadTest extends OverOurServer {
        @Override
        NbdServerConfig config(int index) {
            return NbdServerConfig.builder()
                    .port(0)
                    .requestExecution(RequestExecution.CONNECTION_THREAD)
                    .build();
        }
    }

    static final class OverNbdkitMemoryTest extends MemberDiskContract {
        private final List<Nbdkit> servers = new ArrayList<>();

        @TempDir
        Path tmp;

        @Override
        protected MemberDisk create(long size) throws IOException {
            try {
                Path dir = java.nio.file.Files.createDirectories(tmp.resolve("k" + servers.size()));
                Nbdkit nbdkit = Nbdkit.unix(dir, "memory", Long.toString(size));
                servers.add(nbdkit);
                return NbdDisk.open(nbdkit.uri(), NbdClientConfig.defaults());
            } catch (IOException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException(e);
            }
        }

        @AfterEach
        void stopServers() {
            for (Nbdkit k : servers) {
                k.close();
            }
        }
    }
}
