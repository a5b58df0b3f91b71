package org.raidfive.nbd;

/**
 * Which thread runs a request against the disk in {@link NbdServer}.
 *
 * <p>Measured with fio (4 KiB random reads, memory disk, 2 shared cores), handing every request
 * to a worker cost about as much CPU as everything else together (thread wake-ups): ~20 us of
 * server CPU per request against ~8 us when the connection's thread runs it. Running requests on
 * the connection's thread has a price: one connection's requests then run one at a time, so a
 * slow one (an fsync, an O_DIRECT read from a real disk, a RAID read-modify-write waiting on
 * members) delays those behind it.
 */
public enum RequestExecution {
    /**
     * The default: a bounded pool shared by all connections runs requests, so one connection's
     * requests run in parallel and replies may leave out of order. One exception saves the
     * hand-off when the reader would otherwise sit idle: a plain READ or WRITE (no FUA) that is the
     * last request in the reader's buffer runs on the reader (at queue depth 1 that is every
     * request). If it is slow, the requests arriving meanwhile are read one service time later.
     * FLUSH, FUA writes, TRIM and WRITE_ZEROES always go to the pool. A plain READ or WRITE on a disk
     * with its own completion-based I/O that does not complete inline (an array over file or NBD
     * members) goes to neither: the reader starts it on that I/O and its completion queues the
     * reply, so no thread waits for it. Right for any disk.
     */
    WORKER_POOL,
    /**
     * The connection's reader thread runs each request itself, in order, and writes the replies of
     * a burst of requests with one gathering write just before it would block on the socket. Best
     * for memory-speed disks; parallelism then comes only from multiple connections.
     */
    CONNECTION_THREAD
}
