/**
 * The RAID-5 engine: {@link org.raidfive.array.Raid5Array} and what stands behind it, in layers,
 * lowest first. A class names only its own layer or lower ones; what it needs from above arrives as
 * an interface at construction, never by a setter afterwards. {@code LayersTest} (raid-core's tests)
 * checks it on every build, with the packages beneath ({@code layout}, {@code parity},
 * {@code counter}, {@code md}, {@code stats}, {@code disk}) naming neither {@code array} nor
 * {@code nbd}, and no method taking more than six arguments outside the I/O and XOR hot paths.
 *
 * <pre>
 * 7 facade, factory  Raid5Array (range checks, the configuration read side around every I/O, status,
 *                    the consistency switch, the hand-over to a reshape) | ArrayCounters (live counters
 *                    in a mapped file) | Assembler (create; assemble: judge members, force; load bitmap
 *                    and PPL) | OnlineReshape (the array while it changes shape: I/O mapped at the
 *                    position, the reshape on a thread of its own, the new array at its end) |
 *                    ReshapeCounters (its live counters, in ArrayCounters' form; both CountersPublishers)
 * 6 conductors       Membership (every change of the member table, quiesce, drains) |
 *                    Recovery (which pass runs, safemode, speed limits, checkpoints) |
 *                    OfflineReshape (adds members to, removes members from, or changes the chunk or
 *                    layout of an array, in md's on-disk form, resumable, degraded if a member fails;
 *                    continues md's; serves I/O mapped at its position meanwhile) | ReshapeSpec
 *                    (which of those, and its speed limits)
 * 5 metadata         ArrayMetadata (events, clean/dirty, roles; superblocks on every live member
 *                    before a change acts; makes the ArrayCore whose hooks it is) | SuperblockIo
 * 4 paths, policies  ReadPath (cut at chunks; the aligned bypass; md's page-by-page retry) |
 *                    WritePath (cut into stripes, segments, columns) | SyncJob (a pass as a window
 *                    of stripes) | PplRecovery | PartialParityLog, WriteIntentBitmap (consistency ports)
 * 3 stripe engine    StripeOp (one bracket: try (StripeOp op = ops.acquire(stripe)) locks the stripe
 *                    and lends an operation, close unlocks; the plans: degraded and corrected reads,
 *                    read-modify-write, reconstruct-write, full stripe, rebuild, resync/check/repair;
 *                    the one "XOR of the other members") | MemberPhase (a phase's member I/O, issued
 *                    and awaited together) | BadBlockPolicy (record or fail, md's rules) | ArrayCore
 * 2 ports            ArrayHooks (member failed, bad blocks recorded, before a write) |
 *                    ConsistencyPort (resync | bitmap | PPL: startWrite, log, endWrite per piece)
 * 1 members          Member (one member: disk, state, nr_pending, bad blocks) | MemberTable
 *                    (immutable, swapped while quiesced) | StripeLocks
 * 0 values           records, enums, exceptions, listener types (ArraySpec, ArrayStatus, ArrayEvent,
 *                    DeviceId, PartialParityEntry, ReshapeState, ...), ArrayEvents (delivery on its
 *                    own thread)
 * </pre>
 *
 * <p>The geometry, the mapping from array sectors to (member, member sector), is
 * {@link org.raidfive.layout.Raid5Layout}, an immutable value (md's algorithm, member count, chunk,
 * member bytes used) that every path asks; a size change ({@code Raid5Array.growMemberBytes}) swaps
 * the core's value while quiesced for one that maps every stripe alike. Each member keeps its own data
 * offset, as md keeps one per device. md's space planning (where a bitmap or a PPL goes on a member, and how big) is in
 * {@link org.raidfive.md.DataOffset}; completion-based I/O over any disk ({@link org.raidfive.disk.AsyncIo})
 * is beside the other async disk code in {@code disk}; every wait without a wake-up backs off as
 * {@link org.raidfive.counter.Backoff} does.
 *
 * <p>Locks, outermost first: the conductor's lock (which pass runs), the configuration write side
 * (quiesce), {@code ArrayMetadata.lock}. The I/O path holds only the configuration read side (a
 * per-thread cell), one stripe lock at a time and, when a member fails, the metadata lock.
 *
 * <p>Member I/O: memory members complete inline (and are used in place: parity is computed
 * straight into the parity member's memory); NBD members are pipelined on their connection; files
 * go to the process's io_uring, or where it is refused run on a pool of I/O threads that grows to
 * the I/O in flight ({@link org.raidfive.disk.IoBackend}), and a stripe makes its file calls itself
 * once that pool is saturated. On the io_uring and on NBD members a write inside one chunk of a
 * healthy stripe runs as continuations, each phase started by the last completion of the one before
 * (on the ring's thread; for NBD on {@code IoThreads.runContinuation}, since a connection's reader
 * must never wait for a request slot), and no thread waits for it
 * ({@code StripeOp.startWriteWithoutThread}); its configuration read side and stripe lock are
 * given back by its last completion. Counters keep md's roles: {@code nr_pending} per member
 * around every member I/O, {@code activeAlignedReads} around reads that bypass the stripe locks.
 *
 * <p>Errors. Everything that can go wrong with storage or a request is an {@link java.io.IOException},
 * and each kind has its own class: {@link java.io.EOFException} for a range outside the array (as on
 * any member); {@link ArrayConfigException} when the members or settings cannot make a working array
 * (create, assemble, add); {@link ArrayStateException} when the array refuses a request in its present
 * state (a check while degraded, a pass while another runs, removing an in-sync member);
 * {@link ArrayFailedException} for every I/O once the array has failed;
 * {@link org.raidfive.disk.MemberInUseException} when another holder owns a member; a plain
 * {@code IOException} for a member's own error or a drain that timed out, its message naming the
 * member. Whatever is refused has written nothing. {@link IllegalArgumentException} and
 * {@link IllegalStateException} are kept for programming errors (a misaligned range, a closed
 * {@link org.raidfive.disk.AsyncIo}, publishing counters twice).
 */
package org.raidfive.array;
