# Guest half of the md interop suite: shell functions that drive Linux md and
# mdadm inside md-vm (busybox sh, root). The Java side (org.raidfive.interop)
# prepends this file to every guest script it generates and then calls these
# functions, one array ("case") after another.
#
# Output protocol, parsed by GuestReport:
#   CASE <case> key=value ...   results; a case may print several such lines,
#                               later keys override earlier ones; no spaces
#                               inside values
#   LOG <case> <text>           what mdadm and the kernel said, one line each
# No function stops the script: a failing step is reported in its CASE line
# and the next case still runs.

export LC_ALL=C
dmesg -c >/dev/null 2>&1   # boot messages are not any case's

# log CASE TEXT...: every non-empty line of TEXT as a LOG line of CASE
log() {
    lc=$1
    shift
    printf '%s\n' "$*" | while IFS= read -r line; do
        [ -n "$line" ] && printf 'LOG %s %s\n' "$lc" "$line"
    done
}

# kmsg CASE: md's kernel messages since the last call, as LOG lines
kmsg() {
    log "$1" "$(dmesg -c 2>/dev/null | sed -n 's/^\[[ 0-9.]*\] //p' | grep -E '^(md|raid|async|bitmap)')"
}

# result CASE key=value...
result() {
    rc_case=$1
    shift
    echo "CASE $rc_case $*"
}

sysmd() { cat "/sys/block/$1/md/$2" 2>/dev/null || echo none; }

# detail_state MD: mdadm --detail's "State :" with the spaces removed, e.g. clean,degraded
detail_state() {
    mdadm --detail "/dev/$1" 2>/dev/null | sed -n 's/^ *State : //p' | tr -d ' '
}

# detail_field MD FIELD: one "FIELD : value" line of mdadm --detail, spaces removed
detail_field() {
    mdadm --detail "/dev/$1" 2>/dev/null | sed -n "s/^ *$2 : //p" | tr -d ' '
}

# examine_state DEV: mdadm --examine's "State :" of one member (clean or active)
examine_state() {
    mdadm --examine "$1" 2>/dev/null | sed -n 's/^ *State : //p' | tr -d ' '
}

# md_examine_state CASE DEV: the member's state as mdadm --examine reads it before assembly
md_examine_state() {
    result "$1" examine_state=$(examine_state "$2")
}

# wait_idle MD: until no sync action runs (10 minutes at most: md-vm's timeout comes first)
wait_idle() {
    wi=0
    while [ "$(sysmd "$1" sync_action)" != idle ] && [ $wi -lt 6000 ]; do
        sleep 0.1
        wi=$((wi + 1))
    done
}

# sha_md MD: sha256 of the whole array, read with O_DIRECT
sha_md() {
    dd if="/dev/$1" bs=1M iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1
}

# md_create CASE MD LAYOUT CHUNK_KIB ASSUME_CLEAN(0|1) BITMAP(0|1) DEV...
# mdadm --create with the default data offset; waits for the initial parity build.
# CHUNK_KIB 0 leaves mdadm's default chunk.
md_create() {
    c=$1 md=$2 layout=$3 chunk=$4 assume=$5 bitmap=$6
    shift 6
    opts=
    [ "$chunk" != 0 ] && opts="$opts --chunk=$chunk"
    [ "$assume" = 1 ] && opts="$opts --assume-clean"
    [ "$bitmap" = 1 ] && opts="$opts --bitmap=internal"
    # shellcheck disable=SC2086
    out=$(mdadm --create "/dev/$md" --run --metadata=1.2 --level=5 --raid-devices=$# \
        --layout="$layout" $opts "$@" 2>&1)
    rc=$?
    log "$c" "$out"
    mdadm --wait "/dev/$md" >/dev/null 2>&1
    wait_idle "$md"
    kmsg "$c"
    result "$c" create_rc=$rc size=$(blockdev --getsize64 "/dev/$md" 2>/dev/null || echo 0)
}

# md_create_grown CASE MD LAYOUT CHUNK_KIB DEV...: mdadm --create on half of each member
# (--size), then, once the initial build ends, mdadm --grow --size=max; waits for md's resync of
# the new stripes. Reports the size before the grow and after.
md_create_grown() {
    c=$1 md=$2 layout=$3 chunk=$4
    shift 4
    half=$(( $(blockdev --getsize64 "$1") / 1024 / 2 / chunk * chunk ))
    out=$(mdadm --create "/dev/$md" --run --metadata=1.2 --level=5 --raid-devices=$# \
        --layout="$layout" --chunk="$chunk" --size="$half" "$@" 2>&1)
    rc=$?
    log "$c" "$out"
    mdadm --wait "/dev/$md" >/dev/null 2>&1
    wait_idle "$md"
    before=$(blockdev --getsize64 "/dev/$md" 2>/dev/null || echo 0)
    out=$(mdadm --grow "/dev/$md" --size=max 2>&1)
    grc=$?
    log "$c" "$out"
    mdadm --wait "/dev/$md" >/dev/null 2>&1
    wait_idle "$md"
    kmsg "$c"
    result "$c" create_rc=$rc grow_rc=$grc size_before_grow=$before \
        size=$(blockdev --getsize64 "/dev/$md" 2>/dev/null || echo 0)
}

# md_assemble CASE MD DEV...: mdadm --assemble; its output goes to the log, its
# line count and exit status to the result
md_assemble() {
    c=$1 md=$2
    shift 2
    out=$(mdadm --assemble "/dev/$md" "$@" 2>&1)
    rc=$?
    log "$c" "$out"
    kmsg "$c"
    result "$c" assemble_rc=$rc assemble_lines=$(printf '%s\n' "$out" | grep -c .)
}

# md_fill CASE MD DATADEV OFFSET_MIB LENGTH_MIB: whole MiBs of DATADEV onto the array's start
md_fill() {
    dd if="$3" of="/dev/$2" bs=1M skip="$4" count="$5" conv=fsync 2>/dev/null
    result "$1" fill_rc=$?
}

# md_patch CASE MD DATADEV PATCH...: each PATCH is SEEK:SKIP:COUNT in 512-byte
# sectors (array sector, data sector, length), written with O_DIRECT so md
# sees sub-page writes
md_patch() {
    c=$1 md=$2 data=$3
    shift 3
    prc=0
    for p in "$@"; do
        seek=${p%%:*}
        rest=${p#*:}
        dd if="$data" of="/dev/$md" bs=512 seek="$seek" skip="${rest%%:*}" count="${rest#*:}" \
            oflag=direct conv=notrunc,fsync 2>/dev/null || prc=1
    done
    result "$c" patch_rc=$prc
}

# md_fail_remove CASE MD DEV: mdadm --fail then --remove
md_fail_remove() {
    out=$(mdadm "/dev/$2" --fail "$3" 2>&1 && mdadm "/dev/$2" --remove "$3" 2>&1)
    rc=$?
    log "$1" "$out"
    kmsg "$1"
    result "$1" fail_remove_rc=$rc after_fail=$(detail_state "$2")
}

# md_hold_dirty CASE MD: safe mode off, so md keeps the array marked active
# (dirty) on disk after the next write until it is stopped
md_hold_dirty() {
    echo 0 >"/sys/block/$2/md/safe_mode_delay"
    result "$1" hold_dirty_rc=$?
}

# copy_dev CASE NAME SRC DST: a raw copy of a member, as a power cut would leave it
copy_dev() {
    dd if="$3" of="$4" bs=1M iflag=direct oflag=direct 2>/dev/null
    result "$1" "copy_$2_rc=$?" "copy_$2_state=$(examine_state "$4")"
}

# md_report CASE MD: the array's state as md (sysfs, md_* keys) and mdadm --detail show it;
# the whole of mdadm --detail goes to the log
md_report() {
    c=$1 md=$2
    log "$c" "$(mdadm --detail "/dev/$md" 2>&1)"
    result "$c" array_state=$(sysmd "$md" array_state) sync_action=$(sysmd "$md" sync_action) \
        degraded=$(sysmd "$md" degraded) raid_disks=$(sysmd "$md" raid_disks) \
        size=$(blockdev --getsize64 "/dev/$md" 2>/dev/null || echo 0) \
        detail=$(detail_state "$md") active_devices=$(detail_field "$md" 'Active Devices') \
        spare_devices=$(detail_field "$md" 'Spare Devices') layout=$(detail_field "$md" Layout) \
        chunk=$(detail_field "$md" 'Chunk Size') uuid=$(detail_field "$md" UUID) \
        events=$(detail_field "$md" Events) bitmap=$(detail_field "$md" 'Intent Bitmap') \
        ctime=$(detail_field "$md" 'Creation Time') consistency=$(detail_field "$md" 'Consistency Policy') \
        md_uuid=$(sysmd "$md" uuid) md_level=$(sysmd "$md" level) md_layout=$(sysmd "$md" layout) \
        md_chunk=$(sysmd "$md" chunk_size) md_metadata=$(sysmd "$md" metadata_version) \
        md_component=$(sysmd "$md" component_size)
}

# md_sha CASE MD
md_sha() {
    result "$1" sha=$(sha_md "$2")
}

# md_check CASE MD: md's own parity check; mismatch_cnt afterwards
md_check() {
    c=$1 md=$2
    wait_idle "$md"
    echo check >"/sys/block/$md/md/sync_action"
    wait_idle "$md"
    kmsg "$c"
    result "$c" mismatch=$(sysmd "$md" mismatch_cnt)
}

# throttle_sync on|off: md's global resync speed limits, so that a resync
# started at assembly can be seen running (off restores md's defaults)
throttle_sync() {
    if [ "$1" = on ]; then
        echo 1 >/proc/sys/dev/raid/speed_limit_min
        echo 1 >/proc/sys/dev/raid/speed_limit_max
    else
        echo 200000 >/proc/sys/dev/raid/speed_limit_max
        echo 1000 >/proc/sys/dev/raid/speed_limit_min
    fi
}

# md_sync_started CASE MD: waits up to 5 s for md to start a sync pass and
# reports which (resync, recover, ...), mdadm --detail's state and /proc/mdstat meanwhile
md_sync_started() {
    c=$1 md=$2
    ws=0
    while [ "$(sysmd "$md" sync_action)" = idle ] && [ $ws -lt 50 ]; do
        sleep 0.1
        ws=$((ws + 1))
    done
    log "$c" "$(grep -A 3 "^$md " /proc/mdstat)"
    result "$c" sync_at_start=$(sysmd "$md" sync_action) detail_at_start=$(detail_state "$md") \
        mdstat_resync=$(grep -A 3 "^$md " /proc/mdstat | grep -c 'resync')
}

# md_stop CASE MD
md_stop() {
    wait_idle "$2"
    out=$(mdadm --stop "/dev/$2" 2>&1)
    rc=$?
    log "$1" "$out"
    kmsg "$1"
    result "$1" stop_rc=$rc
}

# md_create_opts CASE MD N OPTION... DEV...: mdadm --create with N extra options (a write journal,
# a consistency policy); waits for the initial parity build
md_create_opts() {
    c=$1 md=$2 n=$3
    shift 3
    opts=
    while [ "$n" -gt 0 ]; do
        opts="$opts $1"
        shift
        n=$((n - 1))
    done
    # shellcheck disable=SC2086
    out=$(mdadm --create "/dev/$md" --run --metadata=1.2 --level=5 $opts "$@" 2>&1)
    rc=$?
    log "$c" "$out"
    mdadm --wait "/dev/$md" >/dev/null 2>&1
    wait_idle "$md"
    kmsg "$c"
    result "$c" create_rc=$rc size=$(blockdev --getsize64 "/dev/$md" 2>/dev/null || echo 0) \
        consistency=$(detail_field "$md" 'Consistency Policy')
}

# md_bad_blocks CASE MD DEV SECTOR COUNT: md records bad blocks on one member (sysfs, absolute
# device sectors), as after a read error it could not correct; md writes the log when it stops
md_bad_blocks() {
    c=$1 md=$2 dev=${3#/dev/}
    echo "$4 $5" >"/sys/block/$md/md/dev-$dev/bad_blocks"
    rc=$?
    # md writes the log with the next superblock update: a write elsewhere (past 20 MiB) makes one
    dd if=/dev/zero of="/dev/$md" bs=4096 seek=5120 count=1 oflag=direct conv=fsync 2>/dev/null
    sleep 1
    result "$c" badblocks_rc=$rc badblocks="$(tr '\n ' ',:' <"/sys/block/$md/md/dev-$dev/bad_blocks")"
}

# md_grow_stalled CASE MD NEWDEV: start growing the array by one member, with reshape held at
# (almost) no speed, then stop it: the superblocks record a reshape in progress
md_grow_stalled() {
    c=$1 md=$2 dev=$3
    echo 1 >/proc/sys/dev/raid/speed_limit_min
    echo 1 >/proc/sys/dev/raid/speed_limit_max
    mdadm "/dev/$md" --add "$dev" >/dev/null 2>&1
    raid_disks=$(sysmd "$md" raid_disks)
    out=$(mdadm --grow "/dev/$md" --raid-devices=$((raid_disks + 1)) --backup-file="/tmp/$md.backup" 2>&1)
    rc=$?
    log "$c" "$out"
    sleep 2
    kmsg "$c"
    result "$c" grow_rc=$rc sync_action=$(sysmd "$md" sync_action) reshape_position=$(sysmd "$md" reshape_position)
    mdadm --stop "/dev/$md" >/dev/null 2>&1
    throttle_sync off
}

# md_grow_offset_stalled CASE MD NEWDEV KIBPS SECONDS [FAILDEV]: grow by one member as mdadm does
# without a backup file (the data offset moves down), the reshape held to KIBPS KiB/s, stopped after
# SECONDS; with FAILDEV, that member is failed (mdadm --fail) after SECONDS, md carries the reshape on
# degraded, and it is stopped SECONDS later
md_grow_offset_stalled() {
    c=$1 md=$2 dev=$3 bad=${6:-} fail_rc=
    echo 1 >/proc/sys/dev/raid/speed_limit_min
    echo "$4" >/proc/sys/dev/raid/speed_limit_max
    mdadm "/dev/$md" --add "$dev" >/dev/null 2>&1
    raid_disks=$(sysmd "$md" raid_disks)
    out=$(mdadm --grow "/dev/$md" --raid-devices=$((raid_disks + 1)) 2>&1)
    rc=$?
    log "$c" "$out"
    sleep "$5"
    if [ -n "$bad" ]; then
        failed=$(mdadm "/dev/$md" --fail "$bad" 2>&1)
        fail_rc=$?
        log "$c" "$failed"
        sleep "$5"
    fi
    kmsg "$c"
    result "$c" grow_rc=$rc fail_rc=$fail_rc sync_action=$(sysmd "$md" sync_action) \
        reshape_position=$(sysmd "$md" reshape_position) degraded=$(sysmd "$md" degraded)
    mdadm --stop "/dev/$md" >/dev/null 2>&1
    throttle_sync off
}

# md_reshape_stalled CASE MD SPEED SLEEP ARG...: mdadm --grow MD ARG... (e.g. --chunk=128) with the
# reshape throttled to SPEED KiB/s, stopped after SLEEP seconds: the members record it mid-way
md_reshape_stalled() {
    c=$1 md=$2 speed=$3 pause=$4
    shift 4
    echo 1 >/proc/sys/dev/raid/speed_limit_min
    echo "$speed" >/proc/sys/dev/raid/speed_limit_max
    out=$(mdadm --grow "/dev/$md" "$@" 2>&1)
    rc=$?
    log "$c" "$out"
    sleep "$pause"
    kmsg "$c"
    result "$c" grow_rc=$rc sync_action=$(sysmd "$md" sync_action) reshape_position=$(sysmd "$md" reshape_position)
    mdadm --stop "/dev/$md" >/dev/null 2>&1
    throttle_sync off
}

# md_dump CASE MD DEV: the whole array, read through md with O_DIRECT, onto DEV (for the host to compare)
md_dump() {
    dd if="/dev/$2" of="$3" bs=1M iflag=direct oflag=direct 2>/dev/null
    result "$1" dump_rc=$?
}

# md_add CASE MD DEV: mdadm --add, then waits for the recovery onto it to end
md_add() {
    out=$(mdadm "/dev/$2" --add "$3" 2>&1)
    rc=$?
    log "$1" "$out"
    sleep 1
    wait_idle "$2"
    kmsg "$1"
    result "$1" add_rc=$rc after_add=$(detail_state "$2")
}

# md_examine_bitmap CASE NAME DEV: mdadm -X of one member, every line logged as "xbm NAME <line>";
# the dirty bit count as xbm_NAME_dirty
md_examine_bitmap() {
    out=$(mdadm -X "$3" 2>&1)
    printf '%s\n' "$out" | while IFS= read -r line; do
        [ -n "$line" ] && printf 'LOG %s xbm %s %s\n' "$1" "$2" "$line"
    done
    result "$1" "xbm_$2_dirty=$(printf '%s\n' "$out" | sed -n 's/.*chunks), \([0-9]*\) dirty.*/\1/p')"
}

# md_re_add CASE MD DEV: mdadm --re-add (md's bitmap-based recovery), then waits for it to end
md_re_add() {
    out=$(mdadm "/dev/$2" --re-add "$3" 2>&1)
    rc=$?
    log "$1" "$out"
    sleep 1
    wait_idle "$2"
    kmsg "$1"
    result "$1" readd_rc=$rc after_readd=$(detail_state "$2")
}

# md_resync_done CASE MD: waits for a resync md started at assembly, and reports how far md's own
# sync counters got (sync_completed is "done / total" in sectors of the last pass)
md_resync_done() {
    sleep 1
    wait_idle "$2"
    kmsg "$1"
    result "$1" last_sync=$(sysmd "$2" last_sync_action) array_state=$(sysmd "$2" array_state)
}
