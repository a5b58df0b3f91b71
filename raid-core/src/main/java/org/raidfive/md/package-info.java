/**
 * Linux md on-disk metadata: the version 1.2 superblock, bit for bit.
 *
 * <p>Every member of an md array carries a {@code struct mdp_superblock_1}
 * (Linux {@code include/uapi/linux/raid/md_p.h}) at 4 KiB from its start.
 * All numbers in it are little-endian; it is 256 bytes followed by one
 * 16-bit role per device number ({@code dev_roles[max_dev]}); its checksum
 * covers exactly those {@code 256 + 2 * max_dev} bytes. Bytes after that span
 * (up to the end of the 4 KiB block the kernel reads) are not part of it.
 *
 * <ul>
 *   <li>{@link org.raidfive.md.Superblock}: the mutable value (every field),
 *       {@code encode}/{@code decode} and the md checksum.</li>
 *   <li>{@link org.raidfive.md.MdLayout}: md's raid5 layout numbers and
 *       mdadm's names for them.</li>
 *   <li>{@link org.raidfive.md.DataOffset}: where mdadm 4.2 puts the data on
 *       a new member.</li>
 *   <li>{@link org.raidfive.md.MdUuid}: 16-byte UUIDs in mdadm's
 *       {@code xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx} notation.</li>
 *   <li>{@link org.raidfive.md.MdTime}: md's 40-bit-seconds / 24-bit-microseconds
 *       time stamps.</li>
 * </ul>
 *
 * <p>Reading never trusts the disk: {@code Superblock.decode} checks what
 * the kernel's {@code super_1_load}/{@code super_1_validate} check (and the
 * raid5-only rules of this engine) and throws a checked
 * {@link org.raidfive.md.SuperblockException} naming the member and the exact
 * problem. Writing refuses a superblock that reading would refuse.
 *
 * <p>Nothing here is thread-safe; a {@code Superblock} is a plain value owned
 * by one thread at a time.
 */
package org.raidfive.md;
