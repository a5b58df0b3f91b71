/**
 * Network block device, both ways: {@link org.raidfive.nbd.NbdServer} exports any
 * {@link org.raidfive.disk.MemberDisk} (a RAID array included) to NBD clients such as the Linux
 * kernel, qemu, nbdinfo or fio; {@link org.raidfive.nbd.NbdClient} and
 * {@link org.raidfive.nbd.NbdDisk} use a remote NBD export as a RAID member.
 *
 * <p>Protocol subset (doc/proto.md of NetworkBlockDevice/nbd): fixed newstyle handshake with
 * NBD_OPT_GO / INFO / EXPORT_NAME / LIST / ABORT and NBD_OPT_STARTTLS (TLS on both sides:
 * {@link org.raidfive.nbd.TlsMode}, {@link org.raidfive.nbd.TlsCredentials}); simple replies only
 * (structured replies, meta contexts and extended headers are answered NBD_REP_ERR_UNSUP by the
 * server and never requested by the client); commands READ, WRITE (+FUA), FLUSH, TRIM,
 * WRITE_ZEROES (+NO_HOLE), DISC.
 *
 * <p>Threading contracts, in brief (details at the top of each class):
 * <ul>
 * <li>Server: one reader thread per connection; requests run on a shared bounded worker pool (or on
 *     the reader itself, {@link org.raidfive.nbd.RequestExecution}); each connection's replies go out
 *     through its own {@code ReplyWriter} in batched gathering writes, so a worker never blocks on a
 *     client's socket. A per-connection in-flight limit and payload budget give back-pressure;
 *     request objects and payload buffers are pooled, so the steady state allocates nothing per
 *     request and logs nothing per request (slf4j debug at connection level). Hostile clients
 *     (silent or slow handshakes, idle or trickling connections, one address or local user taking
 *     every slot) are held off as {@link org.raidfive.nbd.NbdServer} describes.</li>
 * <li>Client: callers send under a lock and park; one reader thread completes them by cookie.
 *     Any timeout or transport error closes the client and fails every pending and later call;
 *     nothing is resent.</li>
 * </ul>
 */
package org.raidfive.nbd;
