/**
 * Scalable counters for the I/O path, after Linux's {@code percpu_ref} and
 * {@code percpu_rw_semaphore}.
 *
 * <h2>What is here</h2>
 * <ul>
 * <li>{@link org.raidfive.counter.PercpuRef}: a count that lives in striped
 *     per-thread cells while it only needs to be changed, and in one exact
 *     atomic word while somebody needs to see zero. Two kinds: a kernel-style
 *     reference (initial reference, {@code kill}, release callback) and an
 *     in-flight counter that starts at zero (md's {@code nr_pending},
 *     {@code active_aligned_reads}); {@link org.raidfive.counter.CounterMode}
 *     picks striped or always-atomic for the latter.</li>
 * <li>{@link org.raidfive.counter.PercpuRwSemaphore}: a read-write lock whose
 *     readers write only their own cell; a writer blocks new readers and
 *     drains active ones.</li>
 * </ul>
 *
 * <h2>Conventions</h2>
 * <ul>
 * <li>Every mutable hot word of a counter or lock sits alone in a 128-byte
 *     span of one {@code long[]} (package-private {@code PaddedWords}), read
 *     and written only through a {@code VarHandle}; the Java objects hold
 *     final fields on the hot path and are never written by it. No
 *     {@code @Contended}, no field padding, no {@code Unsafe}, no JVM
 *     flags.</li>
 * <li>Two kinds of cells, chosen once per JVM ({@code Membarrier}, logged):
 *     <em>owned</em> cells where Linux's {@code membarrier(2)} works, one per
 *     thread ({@code ThreadSlots}: a registry slot, found without writing
 *     anything shared), written by that thread only with plain stores; and
 *     <em>shared</em> cells elsewhere (and for {@link
 *     org.raidfive.counter.CounterMode#PERCPU_SHARED}), picked by a hash of
 *     the thread id and updated with one atomic add, where two threads that
 *     collide stay correct and merely contend.</li>
 * <li>Where the kernel relies on an RCU grace period (a reader that saw the
 *     old mode has finished before the writer/switcher moves on), owned cells
 *     use userspace RCU's membarrier flavour: the switcher's membarrier, then
 *     for {@code PercpuRef} a section that raced the switch settles itself
 *     afterwards against what the fold read (the switcher waits for
 *     nothing), and for {@code PercpuRwSemaphore} a reader that raced the
 *     writer backs out, the writer summing until no hold is left; shared cells use the value returned by
 *     the reader's own atomic read-modify-write ({@code PercpuRef}'s
 *     tombstoned cells) or a Dekker store-then-load between volatile accesses
 *     ({@code tryGetLive} against {@code kill}, {@code PercpuRwSemaphore}'s
 *     reader against its writer). Each class opens with the argument in
 *     prose.</li>
 * <li>The package depends on the JDK, and on JNA for the one system call;
 *     nothing here knows about arrays or disks.</li>
 * </ul>
 */
package org.raidfive.counter;
