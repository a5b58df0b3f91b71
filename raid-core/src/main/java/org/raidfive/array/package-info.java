/**
 * The RAID-5 engine: {@link org.raidfive.array.Raid5Array} and what stands behind it.
 *
 * <pre>
 * Raid5Array    the API: range checks, the configuration read side around every I/O, blocking and
 *   |           completion-based read/write/flush, status; delegates everything else
 *   |-- ReadPath      cuts reads at chunks; a piece on a readable member goes straight to it (md's
 *   |                 aligned read, counted in activeAlignedReads); read errors corrected as md does
 *   |-- WritePath     cuts writes into stripes and each stripe into pieces, under the stripe lock
 *   |-- StripeOp      one pooled object per stripe in hand: the stripe, its parity slot, the member
 *   |                 table, buffers and the plan (degraded or corrected read, read-modify-write,
 *   |                 reconstruct-write, full stripe, rebuild piece, resync/check/repair piece); the
 *   |                 one "XOR of the other members"; each phase's member I/O issued at once
 *   |-- MemberPhase   the member I/Os of one phase, issued together and awaited together
 *   |-- StripeLocks   per-stripe exclusion, no array-wide lock
 *   |-- MemberTable   who holds each slot and which replacement builds beside it; immutable, swapped
 *   |                 as a whole while quiesced
 *   |-- Membership    every change of the table: fail, remove, add spare, replace, spare into an empty
 *   |                 slot, a finished replacement taking over; quiesce; drains a leaving member
 *   |-- Recovery      the background conductor: which pass runs, recovery after a failure, safemode,
 *   |                 speed limits, checkpoints; SyncJob runs one pass as a window of stripes
 *   `-- ArrayMetadata md's superblock state (events, clean/dirty, roles), written to every live member
 *                     before a state change acts; the one place a member becomes faulty
 * Assembler     create and assemble: claims, md's rules for stale and forced members
 * AsyncIo       queue depth over any disk, the array included; callbacks or CompletableFutures
 * ArrayEvents   what happened (ArrayEvent), handed to ArrayListeners in order on one event thread
 * ArrayCounters live counters and events in a memory-mapped file for other processes (IoStats:
 *               the I/O path's per-thread cells, counted only while published)
 * </pre>
 *
 * <p>Layers, lowest first, as {@code LayersTest} (raid-core's tests) checks them on every build: values
 * (records, enums, exceptions, listener types, {@code ArrayEvents}) &lt; members ({@code Member},
 * {@code MemberTable}, {@code StripeLocks}, {@code AsyncIo}) &lt; ports ({@code ArrayHooks}) &lt; the
 * stripe engine ({@code ArrayCore}, {@code MemberPhase}, {@code StripeOp}) &lt; paths and consistency
 * policies ({@code ReadPath}, {@code WritePath}, {@code SyncJob}, {@code PplRecovery},
 * {@code PartialParityLog}, {@code WriteIntentBitmap}) &lt; metadata ({@code SuperblockIo},
 * {@code ArrayMetadata}) &lt; conductors ({@code Membership}, {@code Recovery}, {@code ArrayCounters})
 * &lt; the facade and the factory ({@code Raid5Array}, {@code Assembler}). A class names only its
 * own layer or lower ones; the test lists the seven references upward that remain (the engine
 * naming the log and the bitmap instead of one consistency port, {@code ReadPath} and
 * {@code ArrayCounters} reaching the facade, the bitmap reading the metadata) and fails on any new
 * one. The packages beneath ({@code layout}, {@code parity}, {@code counter}, {@code md},
 * {@code stats}, {@code disk}) name neither {@code array} nor {@code nbd}.
 *
 * <p>Locks, outermost first: the conductor's lock (which pass runs), the configuration write side
 * (quiesce), {@code ArrayMetadata.lock}. The I/O path holds only the configuration read side (a
 * per-thread cell), one stripe lock at a time and, when a member fails, the metadata lock.
 *
 * <p>Member I/O: memory members complete inline (and are used in place: parity is computed
 * straight into the parity member's memory); NBD members are pipelined on their connection; files
 * run on a pool of I/O threads that grows to the I/O in flight, and a stripe makes its file
 * calls itself once that pool is saturated. Counters keep md's roles: {@code nr_pending} per member
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
 * {@link AsyncIo}, publishing counters twice).
 */
package org.raidfive.array;
