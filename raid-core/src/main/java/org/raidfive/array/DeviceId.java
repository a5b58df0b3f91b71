package org.raidfive.array;

import org.raidfive.md.MdUuid;

/** How md's superblock names one member device: its {@code dev_number} and {@code device_uuid}. */
record DeviceId(int devNumber, byte[] uuid) {

    /** A new device numbered {@code devNumber}, with a random UUID as mdadm gives one. */
    static DeviceId fresh(int devNumber) {
        return new DeviceId(devNumber, MdUuid.random());
    }
}
