package org.raidfive.nbd;

import org.raidfive.disk.MemberDisk;
import org.raidfive.disk.MemoryDisk;

/** {@link MemberDiskContractChecks} over NbdDisk against our server and nbdkit, and MemoryDisk as the baseline. */
final class NbdDiskContractTest {
    private NbdDiskContractTest() {
    }

    /** The baseline: if this fails, the checks are wrong, not NBD. */
    static final class OverMemoryDiskTest extends MemberDiskContractChecks {
        @Override
        MemberDisk open(long size) {
            return new MemoryDisk(size);
        }
    }

    static final class OverOurServerTcpTest extends MemberDiskContractChecks {
        private MemoryDisk backing;
        private NbdServer server;

        @Override
        MemberDisk open(long size) throws Exception {
            backing = new MemoryDisk(size);
            server = NbdServer.start(backing, NbdServerConfig.builder().port(0).build());
            return NbdDisk.open(server.uri());
        }

        @Override
        void cleanUp() throws Exception {
            server.close();
            backing.close();
        }
    }

    static final class OverOurServerUnixSocketTest extends MemberDiskContractChecks {
        private MemoryDisk backing;
        private NbdServer server;

        @Override
        MemberDisk open(long size) throws Exception {
            backing = new MemoryDisk(size);
            server = NbdServer.start(backing, NbdServerConfig.builder().unixSocket(tmp.resolve("raid.sock"))
                    .workerThreads(2).build());
            return NbdDisk.open("nbd+unix:///raid?socket=" + tmp.resolve("raid.sock"));
        }

        @Override
        void cleanUp() throws Exception {
            server.close();
            backing.close();
        }
    }

    static final class OverOurServerOnConnectionThreadTest extends MemberDiskContractChecks {
        private MemoryDisk backing;
        private NbdServer server;

        @Override
        MemberDisk open(long size) throws Exception {
            backing = new MemoryDisk(size);
            server = NbdServer.start(backing, NbdServerConfig.builder().port(0)
                    .requestExecution(RequestExecution.CONNECTION_THREAD).build());
            return NbdDisk.open(server.uri());
        }

        @Override
        void cleanUp() throws Exception {
            server.close();
            backing.close();
        }
    }

    static final class OverNbdkitMemoryTest extends MemberDiskContractChecks {
        private Nbdkit nbdkit;

        @Override
        MemberDisk open(long size) throws Exception {
            nbdkit = Nbdkit.unix(tmp, "memory", Long.toString(size));
            return NbdDisk.open(nbdkit.uri(), NbdClientConfig.defaults());
        }

        @Override
        void cleanUp() throws Exception {
            if (nbdkit != null) {
                nbdkit.close();
            }
        }
    }
}
