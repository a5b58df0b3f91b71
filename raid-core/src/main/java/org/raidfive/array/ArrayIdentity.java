package org.raidfive.array;

/**
 * What names an array in md's superblock and never changes: its set UUID, its name and its creation
 * time (seconds).
 */
record ArrayIdentity(byte[] uuid, String name, long ctime) {}
