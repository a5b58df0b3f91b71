/**
 * The Linux md interoperability suite: raidfive's arrays against the real kernel md driver and
 * mdadm, in both directions (see {@code interop/README.md} at the repository root).
 *
 * <p>How it runs: test code makes member images with {@code FileDisk} and {@code Raid5Array}
 * (keeping a {@link org.raidfive.interop.Reference} of what each array holds), generates one guest
 * shell script per boot ({@link org.raidfive.interop.GuestScript}: the functions of
 * {@code src/test/resources/interop/guest-lib.sh}, then one call per step), boots md-vm
 * ({@link org.raidfive.interop.MdVm}, two boots side by side, up to 26 images each), parses the
 * guest's {@code CASE}/{@code LOG} lines ({@link org.raidfive.interop.GuestReport}) and asserts.
 * Bulk data goes in and out through images; the console carries only text.
 *
 * <p>The classes are failsafe {@code *IT}s, run by the {@code md-interop} Maven profile of
 * raid-core; each skips (a JUnit assumption) when md-vm is absent. Scripts, console logs and
 * outputs stay in {@code raid-core/target/md-interop/<suite>/} for reading after a failure.
 */
package org.raidfive.interop;
