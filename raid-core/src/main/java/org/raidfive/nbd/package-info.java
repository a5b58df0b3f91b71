/**
 * Network block device, both ways: {@link org.raidfive.nbd.NbdServer} exports any
 * {@link org.raidfive.disk.MemberDisk} (a RAID array included) to NBD clients such as the Linux
 * kernel, qemu, nbdinfo or fio; {@link org.raidfive.nbd.NbdClient} and
 * {@link org.raidfive.nbd.NbdDisk} use a remote NBD export as a RAID member.
 *
 * <p>Protocol subset (doc/proto.md of NetworkBlockDevice/nbd): fixed newstyle handshake with
 * NBD_OPT_GO / INFO / EXPORT_NAME / LIST / ABORT; simple replies only (structured replies, meta
 * contexts, TLS and extended headers are answered NBD_REP_ERR_UNSUP by the server and never
 * requested by the client); commands READ, WRITE (+FUA), FLUSH, TRIM, WRITE_ZEROES (+NO_HOLE), DISC.
 *
 * <p>Threading contracts, in brief (details at the top of each class):
 * <ul>
 * <li>Server: one reader thread per connection, a shared bounded worker pool, replies written
 *     whole by whichever worker finishes ({@code ReplyWriter}, flat combining, batched gathering
 *     writes). Per-connection in-flight limit gives back-pressure; request objects and payload
 *     buffers are pooled, so the steady state allocates nothing per request and logs nothing
 *     per request (slf4j debug at connection level).</li>
 * <li>Client: callers send under a lock and park; one reader thread completes them by cookie.
 *     Any timeout or transport error closes the client and fails every pending and later call;
 *     nothing is resent.</li>
 * </ul>
 */
package org.raidfive.nbd;
