package org.raidfive.stats;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InaccessibleObjectException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastBufferDescriptor;
import org.agrona.concurrent.broadcast.BroadcastReceiver;
import org.agrona.concurrent.broadcast.BroadcastTransmitter;
import org.agrona.concurrent.broadcast.CopyBroadcastReceiver;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

/**
 * A running array's live counters and events in one memory-mapped file, for other processes to
 * read ({@code raid stat}, {@code raid monitor}), as Aeron's CnC file: a header, then Agrona's
 * counters (metadata and values buffers, {@link CountersManager}), then an Agrona broadcast buffer
 * that carries the array's events. One process writes (the array's publisher); any number read,
 * without locks and without slowing the writer.
 *
 * <pre>
 *   0      header (4 KiB): magic, version, pid, start time, buffer lengths, array name and UUID
 *   4096   counters metadata ({@value #MAX_COUNTERS} records)
 *   ...    counter values
 *   ...    events: a broadcast buffer (capacity {@value #EVENTS_CAPACITY} + trailer)
 * </pre>
 *
 * <p>The file is filled under a temporary name and renamed into place, so a reader never maps a
 * half-made one. Agrona 2 reaches memory through {@code jdk.internal.misc.Unsafe}: a JVM that opens
 * this class needs {@code --add-opens java.base/jdk.internal.misc=ALL-UNNAMED} (the {@code raid}
 * jar's manifest says so for its own JVM). Nothing else in raid-core touches Agrona, so a library
 * user who does not publish counters needs no flags.
 */
public final class CountersFile implements AutoCloseable {
    /** "RAIDCNT1", little-endian. */
    static final long MAGIC = 0x31544e4344494152L;

    static final int VERSION = 2;
    static final int HEADER_LENGTH = 4096;
    static final int MAX_COUNTERS = 1024;
    static final int EVENTS_CAPACITY = 64 * 1024;
    private static final int PID_OFFSET = 16;
    private static final int START_OFFSET = 24;
    private static final int META_LENGTH_OFFSET = 32;
    private static final int VALUES_LENGTH_OFFSET = 36;
    private static final int EVENTS_LENGTH_OFFSET = 40;
    /** The writer's process start, epoch millis: with the pid, names the process across pid reuse. */
    private static final int PROCESS_START_OFFSET = 48;
    /** The inode of the Unix socket the writer serves on, 0 if none: how {@code raid stop --socket} finds it. */
    private static final int SOCKET_INODE_OFFSET = 56;

    private static final int NAME_OFFSET = 64;
    private static final int UUID_OFFSET = 192;
    private static final int MAX_TEXT = 120;

    /** The event record's type in the broadcast buffer. */
    public static final int EVENT_TYPE = 1;

    private final Path path;
    private final MappedByteBuffer mapped;
    private final CountersReader counters;
    private final CountersManager manager;
    private final BroadcastTransmitter transmitter;
    private final CopyBroadcastReceiver receiver;
    private final String arrayName;
    private final String arrayUuid;
    private final long pid;
    private final long startMillis;
    private final long processStartMillis;

    private CountersFile(Path path, MappedByteBuffer mapped, boolean writer) {
        this.path = path;
        this.mapped = mapped;
        ByteBuffer header = mapped.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (mapped.capacity() < HEADER_LENGTH || header.getLong(0) != MAGIC) {
            throw new IllegalArgumentException(path + " is not a raidfive counters file");
        }
        if (header.getInt(8) != VERSION) {
            throw new IllegalArgumentException(path + " is a raidfive counters file of version " + header.getInt(8)
                    + ", not " + VERSION + " (another raidfive release)");
        }
        int metaLength = header.getInt(META_LENGTH_OFFSET);
        int valuesLength = header.getInt(VALUES_LENGTH_OFFSET);
        int eventsLength = header.getInt(EVENTS_LENGTH_OFFSET);
        long need = (long) HEADER_LENGTH + metaLength + valuesLength + eventsLength;
        if (metaLength != MAX_COUNTERS * CountersReader.METADATA_LENGTH
                || valuesLength != MAX_COUNTERS * CountersReader.COUNTER_LENGTH
                || eventsLength != EVENTS_CAPACITY + BroadcastBufferDescriptor.TRAILER_LENGTH
                || need > mapped.capacity()) {
            throw new IllegalArgumentException(path + " is damaged: its header says " + metaLength + " + "
                    + valuesLength + " + " + eventsLength + " bytes of buffers after the header, the file holds "
                    + mapped.capacity() + " bytes");
        }
        this.pid = header.getLong(PID_OFFSET);
        this.startMillis = header.getLong(START_OFFSET);
        this.processStartMillis = header.getLong(PROCESS_START_OFFSET);
        this.arrayName = text(header, NAME_OFFSET);
        this.arrayUuid = text(header, UUID_OFFSET);
        UnsafeBuffer meta = new UnsafeBuffer(mapped, HEADER_LENGTH, metaLength);
        UnsafeBuffer values = new UnsafeBuffer(mapped, HEADER_LENGTH + metaLength, valuesLength);
        UnsafeBuffer events = new UnsafeBuffer(mapped, HEADER_LENGTH + metaLength + valuesLength, eventsLength);
        if (writer) {
            this.manager = new CountersManager(meta, values, StandardCharsets.UTF_8);
            this.counters = manager;
            this.transmitter = new BroadcastTransmitter(events);
            this.receiver = null;
        } else {
            this.manager = null;
            this.counters = new CountersReader(meta, values, StandardCharsets.UTF_8);
            this.transmitter = null;
            this.receiver = new CopyBroadcastReceiver(new BroadcastReceiver(events));
        }
    }

    /**
     * Makes a new counters file at {@code path} (replacing any left by a process that died) for the
     * array {@code name}/{@code uuid} of this process.
     *
     * @throws IllegalStateException if this JVM does not open {@code jdk.internal.misc} to Agrona
     */
    public static CountersFile create(Path path, String name, String uuid) throws IOException {
        int metaLength = MAX_COUNTERS * CountersReader.METADATA_LENGTH;
        int valuesLength = MAX_COUNTERS * CountersReader.COUNTER_LENGTH;
        int eventsLength = EVENTS_CAPACITY + BroadcastBufferDescriptor.TRAILER_LENGTH;
        long length = (long) HEADER_LENGTH + metaLength + valuesLength + eventsLength;
        RunDirectory.check(path.toAbsolutePath().getParent());
        // A name no one can guess, made with O_CREAT|O_EXCL (CREATE_NEW) without following a link:
        // whatever another user put in the directory is never opened, written or truncated.
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp"
                + ProcessHandle.current().pid() + "." + Long.toHexString(new SecureRandom().nextLong()));
        MappedByteBuffer mapped;
        try (FileChannel ch = FileChannel.open(
                tmp,
                Set.of(
                        StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE,
                        LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")))) {
            // Every page written before it is mapped: on a full tmpfs this write fails here, with
            // ENOSPC, instead of a SIGBUS later in whichever thread first touches the page.
            ByteBuffer zeros = ByteBuffer.allocate(64 * 1024);
            for (long at = 0; at < length; at += zeros.capacity()) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), length - at));
                while (zeros.hasRemaining()) {
                    ch.write(zeros, at + zeros.position());
                }
            }
            ch.force(false);
            mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, length);
        } catch (IOException e) {
            Files.deleteIfExists(tmp);
            throw new IOException("cannot make the counters file in " + tmp.getParent() + ": " + e.getMessage(), e);
        }
        ByteBuffer header = mapped.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(8, VERSION);
        header.putInt(12, HEADER_LENGTH);
        header.putLong(PID_OFFSET, ProcessHandle.current().pid());
        header.putLong(START_OFFSET, System.currentTimeMillis());
        header.putLong(PROCESS_START_OFFSET, processStart(ProcessHandle.current()));
        header.putInt(META_LENGTH_OFFSET, metaLength);
        header.putInt(VALUES_LENGTH_OFFSET, valuesLength);
        header.putInt(EVENTS_LENGTH_OFFSET, eventsLength);
        putText(header, NAME_OFFSET, name);
        putText(header, UUID_OFFSET, uuid);
        header.putLong(0, MAGIC);
        CountersFile file;
        try {
            file = new CountersFile(path, mapped, true);
        } catch (IllegalAccessError
                | ExceptionInInitializerError
                | NoClassDefFoundError
                | InaccessibleObjectException e) {
            Files.deleteIfExists(tmp);
            throw new IllegalStateException(
                    "live counters need this JVM to run with --add-opens "
                            + "java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED "
                            + "(Agrona's memory access); the array runs without them: " + e,
                    e);
        }
        try {
            Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING);
        }
        return file;
    }

    /**
     * Maps an existing counters file for reading, read-only (a user who may read it can).
     *
     * @throws IllegalArgumentException if it is not a counters file, or a damaged one
     */
    public static CountersFile open(Path path) throws IOException {
        MappedByteBuffer mapped;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (ch.size() < HEADER_LENGTH || ch.size() > (64L << 20)) {
                throw new IllegalArgumentException(path + " is not a raidfive counters file (" + ch.size() + " bytes)");
            }
            mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
        }
        try {
            return new CountersFile(path, mapped, false);
        } catch (IllegalAccessError | ExceptionInInitializerError | NoClassDefFoundError e) {
            throw new IllegalStateException(
                    "reading live counters needs --add-opens "
                            + "java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED: "
                            + e,
                    e);
        }
    }

    /** A new counter: {@code scope} is "array" or the member's name, {@code stat} one of {@link Stat}. */
    public AtomicCounter newCounter(String scope, Stat stat) {
        return manager.newCounter(scope + "\t" + stat.label(), stat.ordinal());
    }

    /** Sends one event line to every reader (from one thread at a time). */
    public void transmit(String line) {
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        int length = Math.min(bytes.length, transmitter.maxMsgLength());
        transmitter.transmit(EVENT_TYPE, new UnsafeBuffer(bytes), 0, length);
    }

    /** One counter's value now. */
    public record Counter(int id, String scope, Stat stat, long value) {}

    /** Every allocated counter, in allocation order (the array's first, then each member's). */
    public List<Counter> read() {
        List<Counter> out = new ArrayList<>();
        counters.forEach((CountersReader.MetaData) (id, typeId, key, label) -> {
            int tab = label.indexOf('\t');
            if (tab < 0 || typeId < 0 || typeId >= Stat.values().length) {
                return;
            }
            out.add(new Counter(id, label.substring(0, tab), Stat.values()[typeId], counters.getCounterValue(id)));
        });
        return out;
    }

    /**
     * Hands the event lines sent since the last call to {@code sink}; returns how many. Lines lost
     * because this reader fell more than the buffer behind are counted by {@link #lostEvents()}.
     */
    public int pollEvents(Consumer<String> sink) {
        return receiver.receive((type, buffer, index, length) -> {
            if (type == EVENT_TYPE) {
                sink.accept(buffer.getStringWithoutLengthUtf8(index, length));
            }
        });
    }

    /** Times this reader was lapped by the writer (events it did not see). */
    public long lostEvents() {
        return receiver.broadcastReceiver().lappedCount();
    }

    /** The file. */
    public Path path() {
        return path;
    }

    /** The name of the array that publishes the file. */
    public String arrayName() {
        return arrayName;
    }

    /** The UUID of the array that publishes the file. */
    public String arrayUuid() {
        return arrayUuid;
    }

    /** The process that publishes the file. */
    public long pid() {
        return pid;
    }

    /** When the file was made, in milliseconds since the epoch. */
    public long startMillis() {
        return startMillis;
    }

    /**
     * True while the process that made the file runs: its pid is alive and started when the writer
     * did (a pid reused since, or a file naming pid 1, is stale).
     */
    public boolean writerAlive() {
        return ProcessHandle.of(pid)
                .filter(ProcessHandle::isAlive)
                .map(h -> Math.abs(processStart(h) - processStartMillis) < 1000)
                .orElse(false);
    }

    /** The writer records the inode of the Unix socket it serves on (0: none). */
    public void recordServerSocket(long inode) {
        if (manager == null) {
            throw new IllegalStateException("only the writer records its socket");
        }
        mapped.duplicate().order(ByteOrder.LITTLE_ENDIAN).putLong(SOCKET_INODE_OFFSET, inode);
    }

    /** The inode of the Unix socket the writer serves on, 0 if it records none. */
    public long serverSocketInode() {
        return mapped.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(SOCKET_INODE_OFFSET);
    }

    /** When {@code h} started, epoch millis (0 where the OS does not say). */
    static long processStart(ProcessHandle h) {
        return h.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    /** Unmaps; the writer also deletes the file. */
    @Override
    public void close() {
        if (manager != null) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        IoUtil.unmap(mapped);
    }

    /** The directory where running arrays put their counters: {@code $RAID_RUN_DIR}, else /dev/shm/raidfive, else the temp dir. */
    public static Path defaultDirectory() {
        String env = System.getenv("RAID_RUN_DIR");
        if (env != null && !env.isEmpty()) {
            return Path.of(env);
        }
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return shm.resolve("raidfive");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "raidfive");
    }

    /**
     * Where this process publishes the counters of the array with this UUID in {@code dir}: the
     * pid is in the name, so two processes serving copies of one array never share a file.
     */
    public static Path pathFor(Path dir, String uuid) {
        return dir.resolve(uuid + "." + ProcessHandle.current().pid() + ".counters");
    }

    /**
     * The counters files of the array with this UUID in {@code dir} (of every array when it is null),
     * one per process that published.
     */
    public static List<Path> find(Path dir, String uuid) throws IOException {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> {
                        String n = p.getFileName().toString();
                        int dot = n.lastIndexOf('.', n.length() - ".counters".length() - 1);
                        return n.endsWith(".counters")
                                && dot > 0
                                && (uuid == null || n.substring(0, dot).equals(uuid))
                                && n.substring(dot + 1, n.length() - ".counters".length())
                                        .matches("[0-9]+");
                    })
                    .sorted()
                    .forEach(out::add);
        }
        return out;
    }

    private static void putText(ByteBuffer header, int offset, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(b.length, MAX_TEXT);
        header.putInt(offset, n);
        header.put(offset + 4, b, 0, n);
    }

    private static String text(ByteBuffer header, int offset) {
        int n = Math.max(0, Math.min(MAX_TEXT, header.getInt(offset)));
        byte[] b = new byte[n];
        header.get(offset + 4, b, 0, n);
        return new String(b, StandardCharsets.UTF_8);
    }
}
