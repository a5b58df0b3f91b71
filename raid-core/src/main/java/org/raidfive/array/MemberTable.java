package org.raidfive.array;

import java.util.Arrays;

/**
 * Who holds each slot of the array: the member in the slot and the replacement being built beside
 * it (md's {@code rdev} and {@code replacement} per raid disk). Immutable: a membership change
 * builds a new table and publishes it with one volatile store ({@link ArrayCore#table}), always
 * while the array is quiesced, so an I/O holding the configuration read side reads one table for
 * its whole life. Member <em>states</em> are not part of the table: they change under running I/O
 * (a failure is found by I/O) and are re-read at every stripe decision.
 *
 * <p>The arrays are never written after construction; the hot path reads {@link #slots} directly.
 */
final class MemberTable {
    /** The member in each slot, null where the slot is empty. Read-only. */
    final Member[] slots;
    /** The member being rebuilt to replace each slot's member, or null. Read-only. */
    final Member[] replacements;
    /** Every member in a slot completes its I/O inline (memory): callers then run I/O on their own threads. */
    final boolean completesInline;
    /**
     * Every member, replacements too, takes its completion-based I/O on the io_uring or pipelined on
     * a connection (NBD): a write may then run as continuations, no thread waiting for its member
     * I/O ({@link StripeOp#startWriteWithoutThread}).
     */
    final boolean writesWithoutThread;
    /**
     * Some member completes on a connection's reader thread, which must not wait: the continuations
     * of a write without a thread then run on {@link org.raidfive.disk.IoThreads#runContinuation}
     * rather than on the completing thread (the io_uring's loop, which never waits to submit).
     */
    final boolean continuesOffCompletionThread;

    private MemberTable(Member[] slots, Member[] replacements) {
        this.slots = slots;
        this.replacements = replacements;
        boolean inline = true;
        for (Member m : slots) {
            inline &= m == null || m.async.completesInline();
        }
        this.completesInline = inline;
        boolean withoutThread = slots.length > 0;
        boolean connection = false;
        for (Member[] members : new Member[][] {slots, replacements}) {
            for (Member m : members) {
                withoutThread &= m == null || m.async.batchesOnRing() || m.async.pipelinesOnConnection();
                connection |= m != null && m.async.pipelinesOnConnection();
            }
        }
        this.writesWithoutThread = withoutThread;
        this.continuesOffCompletionThread = connection;
    }

    static MemberTable of(Member[] slots, Member[] replacements) {
        if (slots.length != replacements.length) {
            throw new IllegalArgumentException(slots.length + " slots but " + replacements.length + " replacements");
        }
        return new MemberTable(slots.clone(), replacements.clone());
    }

    static MemberTable of(Member[] slots) {
        return of(slots, new Member[slots.length]);
    }

    int width() {
        return slots.length;
    }

    /** This table with {@code m} in {@code slot}. */
    MemberTable withSlot(int slot, Member m) {
        Member[] s = slots.clone();
        s[slot] = m;
        return new MemberTable(s, replacements);
    }

    /** This table with {@code m} building beside {@code slot}'s member. */
    MemberTable withReplacement(int slot, Member m) {
        Member[] r = replacements.clone();
        r[slot] = m;
        return new MemberTable(slots, r);
    }

    /** This table with {@code slot}'s replacement in the slot (its copy is complete). */
    MemberTable promoteReplacement(int slot) {
        Member[] s = slots.clone();
        Member[] r = replacements.clone();
        s[slot] = r[slot];
        r[slot] = null;
        return new MemberTable(s, r);
    }

    /** This table without {@code m}, wherever it was. */
    MemberTable without(Member m) {
        Member[] s = slots.clone();
        Member[] r = replacements.clone();
        for (int i = 0; i < s.length; i++) {
            if (s[i] == m) {
                s[i] = null;
            }
            if (r[i] == m) {
                r[i] = null;
            }
        }
        return new MemberTable(s, r);
    }

    boolean isReplacement(Member m) {
        return m.slot >= 0 && m.slot < replacements.length && replacements[m.slot] == m;
    }

    /** True when {@code m} is in a slot or replacing one. */
    boolean holds(Member m) {
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] == m || replacements[i] == m) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "slots " + Arrays.toString(slots) + ", replacements " + Arrays.toString(replacements);
    }
}
