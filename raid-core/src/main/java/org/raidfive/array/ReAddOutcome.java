package org.raidfive.array;

/**
 * What {@link Raid5Array#reAdd} did.
 *
 * @param slot          the slot the member took back
 * @param byBitmap      true when only the chunks the write-intent bitmap marks are recovered
 * @param dirtyChunks   chunks marked in the bitmap (what a bitmap recovery goes over)
 * @param totalChunks   chunks the bitmap has
 * @param fullRebuildWhy when not by the bitmap: why the member is rebuilt in full; else null
 */
public record ReAddOutcome(int slot, boolean byBitmap, long dirtyChunks, long totalChunks, String fullRebuildWhy) {}
