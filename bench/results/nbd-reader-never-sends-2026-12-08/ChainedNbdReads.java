import java.nio.ByteBuffer;
import java.nio.file.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.raidfive.disk.*;
import org.raidfive.nbd.*;

/** Chained 4 KiB reads on one NBD connection: each callback (on the client's reader) starts the next. */
public class ChainedNbdReads {
    public static void main(String[] a) throws Exception {
        int chains = Integer.parseInt(a[0]);
        long seconds = Long.parseLong(a[1]);
        Path sock = Files.createTempDirectory("chb").resolve("s.sock");
        try (NbdServer server = NbdServer.start(new MemoryDisk(256L << 20), NbdServerConfig.builder().unixSocket(sock).build());
             NbdClient client = NbdClient.connect(server.uri(), NbdClientConfig.defaults())) {
            AtomicLong done = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch ended = new CountDownLatch(chains);
            for (int c = 0; c < chains; c++) {
                ByteBuffer buf = ByteBuffer.allocateDirect(4096);
                ThreadLocalRandom r0 = ThreadLocalRandom.current();
                IoCallback[] cb = new IoCallback[1];
                cb[0] = (tag, err) -> {
                    if (err != null) { System.err.println(err); ended.countDown(); return; }
                    done.incrementAndGet();
                    if (stop.get()) { ended.countDown(); return; }
                    client.readAsync((ThreadLocalRandom.current().nextInt(65536)) * 4096L, buf, 0, 4096, cb[0], tag);
                };
                client.readAsync(r0.nextInt(65536) * 4096L, buf, 0, 4096, cb[0], c);
            }
            Thread.sleep(1000);
            long start = done.get(); long t0 = System.nanoTime();
            Thread.sleep(seconds * 1000);
            long n = done.get() - start; double s = (System.nanoTime() - t0) / 1e9;
            stop.set(true);
            ended.await(10, TimeUnit.SECONDS);
            System.out.printf("chained reads: %d chains, %.0f IOPS%n", chains, n / s);
        }
    }
}
