package org.raidfive.nbd;

/**
 * Which thread runs a request against the disk in {@link NbdServer}.
 *
 * <p>Measured with fio (4 KiB random reads, iodepth 32, memory disk, 2 cores), handing each
 * request to a worker costs about as much CPU as everything else together (a thread wake-up per
 * request); running it on the connection's thread halves the CPU per request. The price is that
 * one connection's requests then run one at a time, so a slow request (an fsync, an O_DIRECT
 * read from a real disk, a RAID read-modify-write waiting on members) delays the ones behind it.
 */
public enum RequestExecution {
    /**
     * The default: a bounded pool shared by all connections runs requests, so one connection's
     * requests run in parallel and replies may leave out of order. Right for any disk.
     */
    WORKER_POOL,
    /**
     * The connection's reader thread runs each request itself, in order, and writes the replies of
     * a burst of requests with one gathering write just before it would block on the socket. Best
     * for memory-speed disks; parallelism then comes only from multiple connections.
     */
    CONNECTION_THREAD
}
