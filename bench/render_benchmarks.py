#!/usr/bin/env python3
"""Writes BENCHMARKS.md (to stdout) from the raw results bench/run-benchmarks left in a directory.

    render_benchmarks.py OUT              the whole page
    render_benchmarks.py --check OUT      names of the IOPS targets missed, one per line (for profiling)
    render_benchmarks.py --check-nbd OUT  the NBD workloads (randread, randwrite) that missed their goal
"""
import glob
import json
import os
import statistics
import sys
from collections import Counter

# (goal, what) for every target: the ratio must be at least the goal.
GOALS = {
    "randread_raw": 0.85,
    "randread_fio": 3.5,
    "randwrite": 0.8,
    "seqwrite": 0.6,
    "xor": 0.5,
    "foundation": 0.8,
    "rebuild": 0.7,
    "degraded": 0.4,
    "striped_vs_atomiclong": 2.4,
    "striped_vs_longadder": 1.0,
    "atomic_vs_atomiclong": 0.9,
    # the parallel stripe engine issue, on memory members: no loss beyond the spread
    "engine_randread": 0.95,
    "engine_randwrite": 0.9,
    "engine_rebuild": 0.9,
    # the partial parity log issue: 4 KiB random writes with ppl vs resync, memory members
    "ppl_randwrite": 0.8,
    # the write-intent bitmap issue: 4 KiB random writes with the bitmap vs without, memory members
    "bitmap_randwrite": 0.9,
}

# The parallel stripe engine issue on real members (bench/real-members): (goal, at least or at most).
REAL_GOALS = {
    "file_randread": (0.85, "min"),
    "file_randwrite": (0.8, "min"),
    "nbd_randwrite": (2.4, "max"),
    "nbd_randread": (1.3, "max"),
    "nbd_rebuild": (0.7, "min"),
}

# NBD: fio's nbd engine, 4 KiB, iodepth 32, 1 job, against `raid serve --backend memory` / nbdkit memory.
NBD_GOALS = {"randread": 1.0, "randwrite": 0.5}


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_lines(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    rows.append(json.loads(line))
    except OSError:
        pass
    return rows


def read_text(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def spread(values):
    values = sorted(values)
    med = statistics.median(values)
    cv = statistics.stdev(values) / statistics.mean(values) if len(values) > 1 and statistics.mean(values) else 0.0
    return {"min": values[0], "median": med, "max": values[-1], "cv": cv, "n": len(values)}


def per_round_ratio(report, num, den, scale=1.0, key="iops"):
    """Median and min/max of num/den over rounds where both ran (pairs run back to back)."""
    if not report:
        return None
    by = {}
    for r in report["runs"]:
        by.setdefault(r["variant"], {})[r["round"]] = r[key]
    a, b = by.get(num, {}), by.get(den, {})
    ratios = [a[k] / (b[k] * scale) for k in sorted(a) if k in b and b[k]]
    return spread(ratios) if ratios else None


def summary(report, variant):
    if not report:
        return None
    for s in report["summaries"]:
        if s["variant"] == variant:
            return s
    return None


def ab_rows(R, jobs, num, den):
    """(name, what, num summary, den summary, per-round ratio num/den) for each of jobs ((name, what)) that ran."""
    rows = []
    for name, what in jobs:
        rep = R.reports.get(name)
        if rep:
            rows.append((name, what, summary(rep, num), summary(rep, den), per_round_ratio(rep, num, den)))
    return rows


def fmt_count(v):
    if v is None:
        return "n/a"
    if v >= 1e6:
        return "%.2fM" % (v / 1e6)
    if v >= 1e3:
        return "%.0fk" % (v / 1e3)
    return "%.0f" % v


def fmt_size(v):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= div:
            return "%g %s" % (v / div, unit)
    return "%d B" % v


def fmt_bw(v):
    return "%.2f GiB/s" % (v / 2**30) if v >= 2**30 else "%.0f MiB/s" % (v / 2**20)


def fmt_us(ns):
    u = ns / 1000.0
    return "%.2f" % u if u < 10 else "%.1f" % u if u < 1000 else "%.0f" % u


def verdict(ratio, goal):
    if ratio is None:
        return "not measured"
    return "**PASS**" if ratio >= goal else "**MISS** (%.0f%% short)" % (100 * (goal - ratio) / goal)


def isal_median(rows, disks):
    vals = [r["data_GBps"] for r in rows if r.get("peer") == "isal_xor_gen" and r.get("disks") == disks]
    return spread(vals) if vals else None


def jmh_entries(path):
    data = load_json(path)
    return data if isinstance(data, list) else []


def jmh_secondary(entry, name_part):
    for k, v in entry.get("secondaryMetrics", {}).items():
        if name_part in k:
            return v
    return None


def raw_scores(metric):
    vals = []
    for fork in metric.get("rawData", []):
        vals.extend(fork)
    return vals


def xor_figure(out, members, chunk):
    for e in jmh_entries(os.path.join(out, "xor.json")):
        p = e.get("params", {})
        if e["benchmark"].endswith(".parity") and p.get("members") == str(members) and p.get("chunk") == str(chunk):
            b = jmh_secondary(e, "bytes")
            if b:
                return spread([x / 1e9 for x in raw_scores(b)]), jmh_secondary(e, "alloc.rate.norm")
    return None, None


class Results:
    def __init__(self, out):
        self.out = out
        self.reports = {os.path.basename(p)[:-5]: load_json(p) for p in glob.glob(os.path.join(out, "*.json"))}
        self.peers = {os.path.basename(p)[:-6]: load_lines(p) for p in glob.glob(os.path.join(out, "*.jsonl"))}
        self.machine = dict(line.split("=", 1) for line in read_text(os.path.join(out, "machine.txt")).splitlines()
                            if "=" in line)

        self.nbd_machine = dict(line.split("=", 1) for line in
                                read_text(os.path.join(out, "nbd_machine.txt")).splitlines() if "=" in line)

    def cmd(self, name):
        return read_text(os.path.join(self.out, name + ".cmd"), "(not run)")

    def nbd(self, rw):
        """(ours, pool, nbdkit, per-round ratio ours/nbdkit, per-round ratio pool/nbdkit) for one workload."""
        def rows(variant):
            return {r.get("round", i): r["iops"] for i, r in enumerate(self.peers.get("nbd_%s_%s" % (variant, rw), []))}
        ours, pool, peer = rows("raidfive"), rows("raidfive_pool"), rows("nbdkit")

        def ratio(a):
            vals = [a[k] / peer[k] for k in sorted(a) if k in peer and peer[k]]
            return spread(vals) if vals else None

        def stats(a):
            return spread(list(a.values())) if a else None
        return stats(ours), stats(pool), stats(peer), ratio(ours), ratio(pool)

    def nbd_missed(self):
        return [rw for rw, goal in NBD_GOALS.items() if self.nbd(rw)[3] and self.nbd(rw)[3]["median"] < goal]

    def targets(self):
        """Rows: key, title, figure text, reference text, ratio spread, goal."""
        rows = []
        rr = self.reports.get("randread")
        ratio = per_round_ratio(rr, "array percpu", "raw")
        s, raw = summary(rr, "array percpu"), summary(rr, "raw")
        rows.append(("randread", "4 KiB random reads, 4 memory members, 2 jobs, vs the same job on one raw MemoryDisk",
                     s and "%s IOPS" % fmt_count(s["iops"]["median"]), raw and "%s IOPS" % fmt_count(raw["iops"]["median"]),
                     ratio, GOALS["randread_raw"]))
        rows.append(("foundation", "(foundation issue) the same, >= 0.8x raw",
                     s and "%s IOPS" % fmt_count(s["iops"]["median"]), raw and "%s IOPS" % fmt_count(raw["iops"]["median"]),
                     ratio, GOALS["foundation"]))
        fio = [r["iops"] for r in self.peers.get("fio_randread", [])]
        fio_ratio = None
        if s and fio:
            fio_ratio = {"median": s["iops"]["median"] / statistics.median(fio),
                         "min": s["iops"]["min"] / max(fio), "max": s["iops"]["max"] / min(fio), "n": len(fio)}
        rows.append(("randread", "the same reads vs fio psync on tmpfs (peer `fio-tmpfs randread 4k 2`)",
                     s and "%s IOPS" % fmt_count(s["iops"]["median"]),
                     fio and "%s IOPS (median of %d)" % (fmt_count(statistics.median(fio)), len(fio)),
                     fio_ratio, GOALS["randread_fio"]))
        rw = self.reports.get("randwrite")
        wratio = per_round_ratio(rw, "array percpu", "raw", scale=0.25)
        ws, wraw = summary(rw, "array percpu"), summary(rw, "raw")
        rows.append(("randwrite", "4 KiB random writes (read-modify-write) vs a quarter of raw MemoryDisk 4 KiB writes",
                     ws and "%s IOPS" % fmt_count(ws["iops"]["median"]),
                     wraw and "%s IOPS / 4 = %s" % (fmt_count(wraw["iops"]["median"]), fmt_count(wraw["iops"]["median"] / 4)),
                     wratio, GOALS["randwrite"]))
        sq = self.reports.get("seqwrite")
        n = sq["config"]["disks"] if sq else 4
        sratio = per_round_ratio(sq, "array percpu", "raw-members", scale=(n - 1) / n, key="bw_bytes")
        ss, sraw = summary(sq, "array percpu"), summary(sq, "raw-members")
        rows.append(("seqwrite", "full-stripe sequential writes (bs 1536k = 3 x 512k chunks) vs raw aggregate member "
                                 "bandwidth x (n-1)/n",
                     ss and fmt_bw(ss["bw_bytes"]["median"]),
                     sraw and "%s x %d/%d = %s" % (fmt_bw(sraw["bw_bytes"]["median"]), n - 1, n,
                                                  fmt_bw(sraw["bw_bytes"]["median"] * (n - 1) / n)),
                     sratio, GOALS["seqwrite"]))
        java, _ = xor_figure(self.out, 4, 65536)
        isal = isal_median(self.peers.get("isal4", []), 4)
        xratio = None
        if java and isal:
            xratio = {"median": java["median"] / isal["median"], "min": java["min"] / isal["max"],
                      "max": java["max"] / isal["min"], "n": java["n"]}
        rows.append(("xor", "XOR parity on 4 x 64 KiB (3 sources) vs ISA-L `xor_gen` (peer `xor-isal 4 65536`)",
                     java and "%.1f GB/s" % java["median"], isal and "%.1f GB/s (median of %d)" % (isal["median"], isal["n"]),
                     xratio, GOALS["xor"]))
        rb = (self.peers.get("rebuild") or [None])[0]
        if rb:
            reads, rebuilds = spread(rb["read_bytes_per_s"]), spread(rb["rebuild_bytes_per_s"])
            rows.append(("rebuild", "(failure issue) rebuild onto a spare, 4 x 1 GiB memory members, vs one member's "
                                    "sequential read rate (same rounds)",
                         "%s (median)" % fmt_bw(rebuilds["median"]), "%s (median)" % fmt_bw(reads["median"]),
                         spread(rb["ratio"]), GOALS["rebuild"]))
            if rb.get("bare_xor_1thread_bytes_per_s"):
                bare = spread(rb["bare_xor_1thread_bytes_per_s"])
                bound = spread([a / b for a, b in zip(rb["rebuild_bytes_per_s"], rb["bare_xor_1thread_bytes_per_s"])])
                rows.append(("rebuild_bound", "(context, no goal) the same rebuild vs the bare XOR kernel over the same "
                                              "memory, one thread (3 filled memory members XORed into a 4th, nothing "
                                              "else; see the rebuild section)",
                             "%s (median)" % fmt_bw(rebuilds["median"]), "%s (median)" % fmt_bw(bare["median"]),
                             bound, None))
        rows.append(("engine_randread", "(stripe engine issue) the same 4 KiB random reads vs raw MemoryDisk, no loss",
                     s and "%s IOPS" % fmt_count(s["iops"]["median"]), raw and "%s IOPS" % fmt_count(raw["iops"]["median"]),
                     ratio, GOALS["engine_randread"]))
        rows.append(("engine_randwrite", "(stripe engine issue) the same 4 KiB random writes vs a quarter of raw writes",
                     ws and "%s IOPS" % fmt_count(ws["iops"]["median"]),
                     wraw and "%s IOPS / 4 = %s" % (fmt_count(wraw["iops"]["median"]), fmt_count(wraw["iops"]["median"] / 4)),
                     wratio, GOALS["engine_randwrite"]))
        if rb and rb.get("bare_xor_2threads_bytes_per_s"):
            bare2 = spread(rb["bare_xor_2threads_bytes_per_s"])
            rows.append(("engine_rebuild", "(stripe engine issue) rebuild onto a spare (its window of stripes on 2 "
                                           "lanes) vs the bare XOR kernel over the same memory on 2 threads",
                         "%s (median)" % fmt_bw(spread(rb["rebuild_bytes_per_s"])["median"]),
                         "%s (median)" % fmt_bw(bare2["median"]),
                         spread([a / b for a, b in zip(rb["rebuild_bytes_per_s"], rb["bare_xor_2threads_bytes_per_s"])]),
                         GOALS["engine_rebuild"]))
        deg, healthy = summary(self.reports.get("randread_degraded"), "array percpu"), summary(rr, "array percpu")
        if deg and healthy:
            dratio = {"median": deg["iops"]["median"] / healthy["iops"]["median"],
                      "min": deg["iops"]["min"] / healthy["iops"]["max"],
                      "max": deg["iops"]["max"] / healthy["iops"]["min"], "n": deg["iops"]["n"]}
            rows.append(("degraded", "(failure issue) degraded 4 KiB random reads (one of 4 members failed) vs healthy "
                                     "(the randread run above)",
                         "%s IOPS" % fmt_count(deg["iops"]["median"]), "%s IOPS" % fmt_count(healthy["iops"]["median"]),
                         dratio, GOALS["degraded"]))
        pw = self.reports.get("ppl_randwrite")
        pratio = per_round_ratio(pw, "array percpu ppl", "array percpu")
        ps, rs = summary(pw, "array percpu ppl"), summary(pw, "array percpu")
        rows.append(("ppl_randwrite", "(partial parity log issue) 4 KiB random writes, memory members, policy ppl vs "
                                      "resync (interleaved; see the PPL section)",
                     ps and "%s IOPS" % fmt_count(ps["iops"]["median"]),
                     rs and "%s IOPS" % fmt_count(rs["iops"]["median"]), pratio, GOALS["ppl_randwrite"]))
        bw = self.reports.get("bitmap_randwrite")
        bratio = per_round_ratio(bw, "array percpu bitmap", "array percpu")
        bs, brs = summary(bw, "array percpu bitmap"), summary(bw, "array percpu")
        rows.append(("bitmap_randwrite", "(write-intent bitmap issue) 4 KiB random writes, memory members, with the "
                                         "bitmap vs without (interleaved; see the bitmap section)",
                     bs and "%s IOPS" % fmt_count(bs["iops"]["median"]),
                     brs and "%s IOPS" % fmt_count(brs["iops"]["median"]), bratio, GOALS["bitmap_randwrite"]))
        rows.extend(self.counter_bench_rows())
        for rw, what in (("randread", "reads"), ("randwrite", "writes")):
            ours, _, peer, ratio, _ = self.nbd(rw)
            rows.append(("nbd_" + rw, "fio nbd engine, 4 KiB random %s, iodepth 32, 1 job, against `raid serve --backend "
                                      "memory --disks 4` vs nbdkit's memory plugin (peer `fio-nbd nbdkit-memory`; "
                                      "see the NBD section)" % what,
                         ours and "%s IOPS" % fmt_count(ours["median"]), peer and "%s IOPS" % fmt_count(peer["median"]),
                         ratio, NBD_GOALS[rw]))
        return rows

    def counter_bench_rows(self):
        """The counters issue's JMH targets: medians over all forks' iterations, range ours-min / theirs-max."""
        def impls(name):
            out = {}
            for e in jmh_entries(os.path.join(self.out, name + ".json")):
                if e["benchmark"].endswith(".getPut"):
                    out[e.get("params", {}).get("impl")] = raw_scores(e["primaryMetric"])
            return out

        rows = []
        for name, threads in (("counter2", 2), ("counter1", 1)):
            got = impls(name)
            pairs = [("PercpuRefAtomic", "AtomicLong", "atomic_vs_atomiclong", "atomic mode")]
            if threads == 2:
                pairs = [("PercpuRefOwned", "AtomicLong", "striped_vs_atomiclong", "striped (owned cells)"),
                         ("PercpuRefOwned", "LongAdder", "striped_vs_longadder", "striped (owned cells)")] + pairs
            for ours, theirs, goal, what in pairs:
                a, b = got.get(ours), got.get(theirs)
                if not a and ours == "PercpuRefOwned" and got.get("PercpuRefStriped"):
                    a, what = got["PercpuRefStriped"], "striped (shared cells: a run before the owned cells)"

                if not a or not b:
                    continue
                ma, mb = statistics.median(a), statistics.median(b)
                ratio = {"median": ma / mb, "min": min(a) / max(b), "max": max(a) / min(b), "n": len(a)}
                rows.append(("counters", "(counters issue) PercpuRef %s vs %s, get+put pairs, %d thread%s (`CounterBench`, "
                                         "medians of all forks' iterations)" % (what, theirs, threads,
                                                                               "s" if threads > 1 else ""),
                             "%.1f ops/us" % ma, "%.1f ops/us" % mb, ratio, GOALS[goal]))
        return rows

    def counter_rows(self):
        rows = []
        for name in ("randread", "randwrite"):
            rep = self.reports.get(name)
            ratio = per_round_ratio(rep, "array percpu", "array atomic")
            a, p = summary(rep, "array atomic"), summary(rep, "array percpu")
            if ratio and a and p:
                noise = max(a["iops"]["cv"], p["iops"]["cv"])
                ok = ratio["median"] >= 1 - noise
                rows.append((name, a, p, ratio, noise, ok))
        return rows

    def missed(self):
        names = []
        for key, _, _, _, ratio, goal in self.targets():
            if key in ("randread", "randwrite", "seqwrite", "rebuild") and ratio and ratio["median"] < goal and key not in names:
                names.append(key)
        return names


def profile_section(out, name, threads=("bench-job", "asyncio"), what="the job threads"):
    """Summary of a JFR recording; kept in NAME.profile.md so the page can be rendered again later."""
    saved = os.path.join(out, name + ".profile.md")
    data = load_json(os.path.join(out, name + ".samples.json"))
    if not data:
        text = read_text(saved)
        return text.splitlines() if text else []
    lines = profile_lines(out, name, data, threads, what)
    with open(saved, "w") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def profile_lines(out, name, data, threads=("bench-job", "asyncio"), what="the job threads"):
    events = data.get("recording", {}).get("events", [])
    self_count, incl_count, total = Counter(), Counter(), 0
    for e in events:
        v = e.get("values", {})
        thread = (v.get("sampledThread") or {}).get("javaName") or ""
        if not thread.startswith(threads):
            continue
        frames = (v.get("stackTrace") or {}).get("frames") or []
        if not frames:
            continue
        total += 1
        names = []
        for f in frames:
            m = f.get("method", {})
            cls = (m.get("type") or {}).get("name", "?").replace("/", ".").split(".")[-1].replace("$", ".")
            names.append("%s.%s" % (cls, m.get("name", "?")))
        self_count[names[0]] += 1
        for n in set(names):
            incl_count[n] += 1
    if not total:
        return []
    lines = ["%d execution samples on %s (`%s`)." % (total, what, read_text(os.path.join(out, name + ".profile.cmd"))),
             "", "| self (top of stack) | % | | inclusive (on the stack) | % |", "|---|---:|---|---|---:|"]
    top_self = self_count.most_common(10)
    top_incl = [x for x in incl_count.most_common(40) if not x[0].endswith(".run")][:10]
    for i in range(max(len(top_self), len(top_incl))):
        a = top_self[i] if i < len(top_self) else ("", 0)
        b = top_incl[i] if i < len(top_incl) else ("", 0)
        lines.append("| `%s` | %s | | `%s` | %s |" % (a[0], "%.1f" % (100.0 * a[1] / total) if a[0] else "",
                                                   b[0], "%.1f" % (100.0 * b[1] / total) if b[0] else ""))
    return lines


def report_table(rep):
    lines = ["| variant | IOPS min / median / max | CV | BW (median) | clat p50 / p99 / p99.9 / max (us) | CPU % |",
             "|---|---|---:|---|---|---:|"]
    for s in rep["summaries"]:
        i, c = s["iops"], s["clat_ns"]
        lines.append("| %s | %s / %s / %s | %.1f%%%s | %s | %s / %s / %s / %s | %.0f |" % (
            s["variant"], fmt_count(i["min"]), fmt_count(i["median"]), fmt_count(i["max"]), 100 * i["cv"],
            " (!)" if s["spread_warning"] else "", fmt_bw(s["bw_bytes"]["median"]),
            fmt_us(c["p50"]), fmt_us(c["p99"]), fmt_us(c["p99_9"]), fmt_us(c["max"]), s["cpu_pct"]["median"]))
    for s in rep["summaries"]:
        if s["spread_warning"]:
            lines.append("")
            lines.append("> WARNING: %s IOPS spread is CV %.1f%% (> 5%%): differences smaller than that are noise here." % (
                s["variant"], 100 * s["iops"]["cv"]))
    return lines


def nbd_section(R):
    L = []
    w = L.append
    m = R.nbd_machine
    w("## NBD: fio against `raid serve` and nbdkit's memory plugin")
    w("")
    if not m:
        w("Not measured in this run (`bench/run-benchmarks --only nbd` measures it).")
        w("")
        return L
    w("fio's nbd engine (peer `fio-nbd URI RW 4k 32 1 %s`: 4 KiB, iodepth 32, one job, a 1 GiB region, one NBD" % m.get("runtime", "?"))
    w("connection) against `raid serve --backend memory --disks 4 --size 1G --socket PATH` (RAID-5 on four in-memory")
    w("members) and against nbdkit's memory plugin (C, no RAID), both on a Unix socket (the peer script serves nbdkit")
    w("that way, so ours is served the same way: one transport on both sides). Each round runs nbdkit, then ours with")
    w("the default executor (`auto`: the connection's thread runs its requests, for a memory array), then ours with")
    w("`--executor pool`; ratios are taken per round. nbdkit is started afresh for each run (the peer script does).")
    w("")
    w("Measured %s, commit %s, load average %s at the start and %s at the end, %s rounds x %s s after one %s s "
      "warm-up run of each%s." % (m.get("date", "?"), m.get("commit", "?"), m.get("loadavg_start", "?"),
                                  m.get("loadavg_end", "?"), m.get("repeat", "?"), m.get("runtime", "?"),
                                  m.get("warmup", "?"),
                                  "; by `bench/run-benchmarks --only nbd`, apart from the rest of this page"
                                  if m.get("only") == "nbd" else ""))
    w("")
    w("| workload | raid serve (default) IOPS min / median / max (CV) | raid serve `--executor pool` | nbdkit memory "
      "| ratio default / nbdkit, median (per-round min-max) | ratio pool / nbdkit | goal | verdict |")
    w("|---|---|---|---|---|---|---:|---|")

    def figs(st):
        if not st:
            return "n/a"
        return "%s / %s / %s (%.0f%%)" % (fmt_count(st["min"]), fmt_count(st["median"]), fmt_count(st["max"]),
                                        100 * st["cv"])

    for rw in ("randread", "randwrite"):
        ours, pool, peer, ratio, pratio = R.nbd(rw)
        w("| 4 KiB %s | %s | %s | %s | %s | %s | >= %.2fx | %s |" % (
            rw, figs(ours), figs(pool), figs(peer), rat(ratio), rat(pratio), NBD_GOALS[rw],
            verdict(ratio and ratio["median"], NBD_GOALS[rw])))
    w("")
    serve = read_text(os.path.join(R.out, "nbd_serve.txt"))
    if serve:
        w("The servers said:")
        w("")
        for line in serve.splitlines():
            w("    " + line)
        w("")
    w("Commands:")
    w("")
    for rw in ("randread", "randwrite"):
        for v in ("nbdkit", "raidfive", "raidfive_pool"):
            w("    " + R.cmd("nbd_%s_%s" % (v, rw)))
    w("")
    for rw in ("randread", "randwrite"):
        lines = profile_section(R.out, "nbd_" + rw, threads=("nbd",), what="the server's NBD threads")
        if lines:
            w("### Profile of `raid serve`: %s (missed its goal)" % rw)
            w("")
            L.extend(lines)
            w("")
    return L


def kv_file(path):
    m = {}
    for line in read_text(path).splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            m[k.strip()] = v.strip()
    return m


def measured_line(m):
    """When, where and how a script-made section was measured, from its machine file."""
    return "Measured %s, commit %s, %s, %s cores, load average %s at the start and %s at the end, %s rounds x %s s." % (
        m.get("date", "?"), m.get("commit", "?"), m.get("cpu", "?"), m.get("cores", "?"), m.get("loadavg_start", "?"),
        m.get("loadavg_end", "?"), m.get("repeat", "?"), m.get("runtime", "?"))


def rat(r):
    """A ratio's spread as median (min-max), or n/a."""
    return "%.2fx (%.2f-%.2f)" % (r["median"], r["min"], r["max"]) if r else "n/a"


def section_start(out, title, machine_file, how):
    """A script-made section's heading and its machine file: (lines so far, machine), machine None when the
    script did not run in this set of results (the lines then say which command measures it)."""
    L = ["## " + title, ""]
    m = kv_file(os.path.join(out, machine_file))
    if not m:
        L += ["Not measured in this run (`%s` measures it)." % how, ""]
    return L, m


def hardening_section(out):
    """Issue 13's figures, from bench/nbd-hardening's hard_* files."""
    L, m = section_start(out, "NBD hardening: before and after, TLS, a good client beside hostile ones", "hard_machine.txt", "bench/nbd-hardening")
    w = L.append
    if not m:
        return L
    rows = {}
    for name in ("nbdkit", "before", "after", "nbdkit_tls", "raidfive_tls", "good_alone", "good_beside_hostile"):
        rows[name] = {r["round"]: r["iops"] for r in load_lines(os.path.join(out, "hard_%s.jsonl" % name))}
    rss = [r["peak_rss_kib"] for r in load_lines(os.path.join(out, "hard_rss.jsonl"))]

    def figs(name):
        v = list(rows[name].values())
        if not v:
            return "n/a"
        st = spread(v)
        return "%s / %s / %s (%.0f%%)" % (fmt_count(st["min"]), fmt_count(st["median"]), fmt_count(st["max"]),
                                        100 * st["cv"])

    def ratio(num, den):
        r = [rows[num][k] / rows[den][k] for k in rows[num] if k in rows[den] and rows[den][k]]
        if not r:
            return None
        return spread(r)

    w("fio's nbd engine, 4 KiB random reads, one job, against `raid serve --backend memory --disks 4 --size 1G` "
      "(Unix socket, default executor) and nbdkit's memory plugin; the same with TLS required on both sides "
      "(`--tls require`, `nbdkit --tls=require`, one RSA-2048 certificate made by the script); and a good client "
      "(iodepth 16, TCP, `--executor pool`) alone and beside `bench/hostile_clients.py` (200 connections that never "
      "send a handshake, 4 that pipeline 1 MiB reads and 8 that pipeline 32 MiB reads, none reading a reply). "
      "\"Before\" is `raid serve` built from %s. Rounds interleaved; ratios per round, median (min-max)." % (
          m.get("before_jar", "?")))
    w("")
    w(measured_line(m))
    w("")
    w("| configuration | IOPS min / median / max (CV) |")
    w("|---|---|")
    for name, label in (("nbdkit", "nbdkit memory, iodepth 32"), ("before", "raid serve before, iodepth 32"),
                        ("after", "raid serve after, iodepth 32"), ("nbdkit_tls", "nbdkit memory, TLS, iodepth 32"),
                        ("raidfive_tls", "raid serve, TLS, iodepth 32"), ("good_alone", "good client alone, iodepth 16"),
                        ("good_beside_hostile", "good client beside the hostile ones, iodepth 16")):
        w("| %s | %s |" % (label, figs(name)))
    w("")
    w("| ratio | median (per-round min-max) | goal | verdict |")
    w("|---|---|---:|---|")
    for num, den, label, goal in (("after", "before", "after / before (no loss beyond the spread)", 0.95),
                                  ("after", "nbdkit", "after / nbdkit", 1.2),
                                  ("raidfive_tls", "nbdkit_tls", "raid serve TLS / nbdkit TLS", 1.0),
                                  ("good_beside_hostile", "good_alone", "good client beside hostile / alone", 0.5)):
        r = ratio(num, den)
        g = ">= %.2fx" % goal
        v = verdict(r and r["median"], goal)
        w("| %s | %s | %s | %s |" % (label, rat(r), g, v))
    if rss:
        w("")
        w("Server resident set (VmRSS, sampled every 200 ms) peaked at %s MiB over the rounds beside the hostile "
          "clients (per round: %s MiB); the in-memory array itself holds 4 x 342 MiB. Before the budget, 8 clients "
          "making 32 MiB reads took it from 0.2 to 9.4 GB." % (max(rss) // 1024, ", ".join(str(x // 1024) for x in rss)))
    w("")
    w("Command: `BEFORE_JAR=/path/to/old/raid.jar bench/nbd-hardening` (its header says what each run does).")
    w("")
    return L


def lockouts_section(out):
    """The shared-machine issue's lock-out figures, from bench/lockouts' lock_* files."""
    L, m = section_start(out, "Lock-outs: a good client beside clients that try to keep it out", "lock_machine.txt",
                         "bench/lockouts")
    w = L.append
    if not m:
        return L
    attacks = (("idle", "64 clients past NBD_OPT_GO, then silent"),
               ("trickle", "64 clients trickling a 1 MiB write's payload a byte a second"),
               ("silent", "40 connections a second that never send a byte"))
    rows = {}
    for server in ("raid", "nbdkit"):
        for name in ("alone",) + tuple(a for a, _ in attacks):
            rows[server, name] = {r["round"]: r["iops"] for r in load_lines(os.path.join(out, "lock_%s_%s.jsonl" % (server, name)))}

    def figs(key):
        v = list(rows[key].values())
        if not v:
            return "n/a"
        st = spread(v)
        return "%s / %s / %s" % (fmt_count(st["min"]), fmt_count(st["median"]), fmt_count(st["max"]))

    def ratio(server, name):
        a, b = rows[server, name], rows[server, "alone"]
        r = [a[k] / b[k] for k in a if k in b and b[k]]
        return spread(r) if r else None

    w("fio's nbd engine, 4 KiB random reads, iodepth 16, one job over TCP from 127.0.0.1, alone and 6 s after "
      "`bench/lockout_attacks.py` started an attack as another user of the machine (nobody, through setpriv) from the same "
      "127.0.0.1 (every attacker comes back as soon as it is closed or refused), against `raid serve --backend memory --disks 4 --size 1G --port 0` with the server's "
      "defaults (64 connections, 32 per address or local user, 16 in the handshake, payload timeout 10 s) and against nbdkit's "
      "memory plugin (the peer, which has no connection limit). Rounds interleaved; ratios per round to the same "
      "round's alone figure, median (min-max). A run that fio could not start counts 0 IOPS.")
    w("")
    w(measured_line(m))
    w("")
    w("| the good client | raid serve IOPS min / median / max | ratio to alone | goal | verdict | nbdkit IOPS min / median / max | ratio to alone |")
    w("|---|---|---|---:|---|---|---|")
    w("| alone | %s | | | | %s | |" % (figs(("raid", "alone")), figs(("nbdkit", "alone"))))
    for name, label in attacks:
        r = ratio("raid", name)
        w("| beside %s | %s | %s | >= 0.50x | %s | %s | %s |" % (label, figs(("raid", name)), rat(r),
                                                              verdict(r and r["median"], 0.5), figs(("nbdkit", name)),
                                                              rat(ratio("nbdkit", name))))
    w("")
    w("Command: `bench/lockouts` (or `bench/run-benchmarks --only lockouts`; its header says what each attack does).")
    w("")
    return L


def real_section(out):
    """The parallel stripe engine issue's figures on members that are not memory, from bench/real-members."""
    L, m = section_start(out, "Real members: files with O_DIRECT, members with 2 ms of latency", "real_machine.txt", "bench/real-members")
    w = L.append
    if not m:
        return L
    w("Measured %s, commit %s, %s, %s cores, load average %s at the start and %s at the end, %s rounds x %s s; "
      "file members on %s. Ours and the peer run back to back in each round; ratios per round, median (min-max)."
      % (m.get("date", "?"), m.get("commit", "?"), m.get("cpu", "?"), m.get("cores", "?"), m.get("loadavg_start", "?"),
         m.get("loadavg_end", "?"), m.get("repeat", "?"), m.get("runtime", "?"), m.get("dir_fs", "?")))
    w("")
    rows = []

    def file_rounds(rw):
        fio = {r["round"]: r["iops"] for r in load_lines(os.path.join(out, "real_file_fio_%s.jsonl" % rw))}
        ours = {}
        for path in glob.glob(os.path.join(out, "real_file_raid_%s_*.json" % rw)):
            rep = load_json(path)
            st = summary(rep, "array percpu")
            if st:
                ours[int(path.rsplit("_", 1)[1].split(".")[0])] = st["iops"]["median"]
        return ours, fio

    for rw, scale, label in (("randread", 1.0, "fio io_uring randread on one file, same depth"),
                             ("randwrite", 0.25, "a quarter of fio io_uring randwrite on one file (4 member I/Os per write)")):
        ours, fio = file_rounds(rw)
        r = [ours[k] / (fio[k] * scale) for k in ours if k in fio and fio[k]]
        rows.append(("file_" + rw, "file members, O_DIRECT, 4 KiB %s, 2 jobs x iodepth 32, vs %s" % (rw, label),
                     "%s IOPS" % fmt_count(statistics.median(ours.values())) if ours else "n/a",
                     "%s IOPS%s" % (fmt_count(statistics.median(fio.values())), " / 4" if scale != 1 else "") if fio else "n/a",
                     spread(r) if r else None))
    for rw in ("randwrite", "randread"):
        member = {x["round"]: x["clat_p50_us"] for x in load_lines(os.path.join(out, "real_nbd_member_%s.jsonl" % rw))}
        raid = {x["round"]: x["clat_p50_us"] for x in load_lines(os.path.join(out, "real_nbd_raid_%s.jsonl" % rw))}
        r = [raid[k] / member[k] for k in raid if k in member and member[k]]
        rows.append(("nbd_" + rw, "4 members with 2 ms of latency (nbdkit delay filter), fio nbd iodepth 1, 4 KiB %s: "
                                  "median latency, array vs one member" % rw,
                     "%.0f us" % statistics.median(raid.values()) if raid else "n/a",
                     "%.0f us" % statistics.median(member.values()) if member else "n/a",
                     spread(r) if r else None))
    reb = {x["round"]: x["bw_bytes"] for x in load_lines(os.path.join(out, "real_nbd_rebuild.jsonl"))}
    seq = {x["round"]: x["bw_bytes"] for x in load_lines(os.path.join(out, "real_nbd_seqread.jsonl"))}
    r = [reb[k] / seq[k] for k in reb if k in seq and seq[k]]
    rows.append(("nbd_rebuild", "rebuild onto a spare over the same links (`raid rebuild`, start-up and assembly "
                                "taken off) vs fio reading one member sequentially (256 KiB x 8)",
                 fmt_bw(statistics.median(reb.values())) if reb else "n/a",
                 fmt_bw(statistics.median(seq.values())) if seq else "n/a", spread(r) if r else None))
    w("| target | raidfive | reference | ratio median (min-max) | goal | verdict |")
    w("|---|---|---|---|---:|---|")
    for key, title, ours, ref, ratio in rows:
        goal, sense = REAL_GOALS[key]
        if ratio is None:
            v = "n/a"
        elif sense == "min":
            v = verdict(ratio["median"], goal)
        else:
            v = "**PASS**" if ratio["median"] <= goal else "**MISS** (%.0f%% over)" % (100 * (ratio["median"] / goal - 1))
        w("| %s | %s | %s | %s | %s %.2fx | %s |" % (
            title, ours, ref, "%.2fx (%.2f-%.2f)" % (ratio["median"], ratio["min"], ratio["max"]) if ratio else "n/a",
            ">=" if sense == "min" else "<=", goal, v))
    w("")
    w("Rebuild rounds (the first rebuild writes pages the spare's nbdkit memory plugin has not allocated yet; later "
      "rounds rebuild onto the same spare): %s." % ", ".join(
          "round %d %s" % (k, fmt_bw(reb[k])) for k in sorted(reb)))
    w("")
    for name in ("real_file_fio_randread", "real_file_raid_randread", "real_file_fio_randwrite",
                 "real_file_raid_randwrite", "real_nbd_raid_randwrite", "real_nbd_member_randwrite",
                 "real_nbd_rebuild", "real_nbd_seqread"):
        cmd = read_text(os.path.join(out, name + ".cmd")).strip()
        if cmd:
            w("    %s" % cmd)
    w("")
    w("Command: `bench/real-members` (its header says what each run does), or `bench/run-benchmarks --only real`.")
    w("")
    return L


def ppl_section(R):
    """The partial parity log's cost, from the ppl_* runs (policy resync and ppl interleaved per round)."""
    L = []
    w = L.append
    w("## Partial parity log: what it costs")
    w("")
    rows = ab_rows(R, (("ppl_randwrite", "memory members, 2 jobs"),
                       ("ppl_file_randwrite", "file members with O_DIRECT, 2 jobs x iodepth 32")),
                   "array percpu ppl", "array percpu")
    if not rows:
        w("Not measured in this run (`bench/run-benchmarks --only ppl` measures it).")
        w("")
        return L
    w("4 KiB random writes on the same array, created with `--consistency-policy resync` and `ppl` in turn in "
      "every round; ratio ppl / resync per round, median (min-max).")
    w("")
    w("| members | resync IOPS (CV) | ppl IOPS (CV) | ppl / resync |")
    w("|---|---|---|---|")
    for name, what, p, s, r in rows:
        w("| %s | %s (%.1f%%) | %s (%.1f%%) | %s |" % (
            what, fmt_count(s["iops"]["median"]), 100 * s["iops"]["cv"], fmt_count(p["iops"]["median"]),
            100 * p["iops"]["cv"], "%.2fx (%.2f-%.2f)" % (r["median"], r["min"], r["max"]) if r else "n/a"))
    w("")
    for name, _, _, _, _ in rows:
        w("    %s" % R.cmd(name))
    w("")
    w("What a logged write adds (as md's raid5-ppl.c): the partial parity of the write (the XOR of the data it "
      "leaves alone, computed from the reads the write does anyway), its CRC-32C, and, before any of the "
      "stripe's data or parity is written, a write of the 4 KiB header and the partial parity to the parity "
      "member's log followed by a flush of that member; after the io_unit's stripes are written, the members "
      "they wrote are flushed before the next io_unit of that log may go. Writes meanwhile gather in the next "
      "io_unit (group commit), one log per member, no array-wide lock. On memory members the flushes cost "
      "nothing; the price is the bytes moved: a logged 4 KiB write computes its partial parity apart, checksums "
      "it, copies it into the io_unit and writes header and partial parity to the log, about three times the "
      "memory traffic of the same write under resync (where parity is XORed straight into the parity member), "
      "plus a short wait when two writers meet on one parity member's log; the profile of the ppl run is half "
      "XOR. On files every io_unit is a synchronous write and a flush (fdatasync) of the parity member, and the "
      "members an io_unit wrote are flushed before the next may go: that is the file row's cost, the price md "
      "pays on disks with a volatile write cache.")
    w("")
    return L


def live_counters_section(R, out):
    """The library issue's counters-on vs off target, from the counters_* runs (off and on interleaved per round)."""
    L = []
    w = L.append
    w("## Live counters: on vs off")
    w("")
    rows = ab_rows(R, (("counters_randread", "4 KiB randread"), ("counters_randwrite", "4 KiB randwrite")),
                   "array percpu live-counters", "array percpu")
    if not rows:
        w("Not measured in this run (`bench/run-benchmarks --only counters` measures it).")
        w("")
        return L
    w("The same array on memory members, 2 jobs, with its live counters published (`Raid5Array.publishCounters`, "
      "as `raid serve` does: per-thread cells on the I/O path, a daemon publishing every 100 ms into the "
      "memory-mapped file) and not, in turn in every round; ratio on / off per round, median (min-max). "
      "Goal: >= 0.97x.")
    w("")
    try:
        with open(os.path.join(out, "counters_date.txt")) as f:
            stamp = f.read().strip()
    except OSError:
        stamp = "at an unrecorded time"
    machine = (R.reports.get("counters_randread") or {}).get("machine", {})
    if machine:
        w("Measured %s (start of the run); %s, %s cores, %s, load average %s." % (
            stamp, machine.get("cpu", "?"), machine.get("cores", "?"), machine.get("jdk", "?"),
            machine.get("loadavg", "?")))
        w("")
    w("| job | off IOPS (CV) | on IOPS (CV) | on / off | goal |")
    w("|---|---|---|---|---|")
    for name, what, on, off, r in rows:
        verdict = "n/a" if not r else ("**PASS**" if r["median"] >= 0.97 else "**MISS**")
        w("| %s | %s (%.1f%%) | %s (%.1f%%) | %s | >= 0.97x: %s |" % (
            what, fmt_count(off["iops"]["median"]), 100 * off["iops"]["cv"], fmt_count(on["iops"]["median"]),
            100 * on["iops"]["cv"], "%.3fx (%.3f-%.3f)" % (r["median"], r["min"], r["max"]) if r else "n/a",
            verdict))
    w("")
    for name, _, _, _, _ in rows:
        w("    %s" % R.cmd(name))
    w("")
    w("What a counted I/O adds: a ThreadLocal lookup per counted object (the array, each member touched) and "
      "two plain loads and opaque stores into the calling thread's own cells (no LOCK prefix, no shared cache "
      "line). A first version with cells hashed by thread id and atomic adds (four LOCK XADDs per aligned "
      "read) measured 0.969x (0.945-0.975) on randread and 0.982x on randwrite in one 5-pair run.")
    w("")
    return L


def fastpath_section(R, out):
    """Issue 19's atomic-free fast path: owned cells vs shared cells (JMH and the engine, one run)."""
    L = []
    w = L.append
    w("## Counters: owned cells (plain stores, membarrier) vs shared cells (atomic adds)")
    w("")
    t2 = os.path.join(out, "fastpath_getput_t2.json")
    if not jmh_entries(t2):
        w("Not measured in this run (`bench/run-benchmarks --only fastpath` measures it).")
        w("")
        return L
    stamp = read_text(os.path.join(out, "fastpath_date.txt"), "at an unrecorded time\n?").splitlines()
    machine = (R.reports.get("fastpath_randread") or {}).get("machine", {})
    w("Measured %s; load average at the start %s; %s, %s cores, %s. `PercpuRefOwned` is what "
      "`CounterMode.PERCPU` is where membarrier(2) works (each thread a cell of its own, one plain store per "
      "get or put, no LOCK prefix); `PercpuRefShared` is the fallback and the code before this change (cells "
      "hashed by thread id, one LOCK XADD per get or put). JMH: medians of all forks' iterations, (min-max); "
      "ratios median / median with (worst-best) from the extremes." % (
          stamp[0] if stamp else "?", " ".join(stamp[1].split()[:3]) if len(stamp) > 1 else "?",
          machine.get("cpu", "?"), machine.get("cores", "?"), machine.get("jdk", "?")))
    w("")

    floors = {".floorSection": "floor: section", ".floorCount": "floor: count"}

    def impls(name):
        got = {}
        for e in jmh_entries(os.path.join(out, name + ".json")):
            floor = next((f for f in floors if e["benchmark"].endswith(f)), None)
            if e["benchmark"].endswith(".getPut") or floor:
                alloc = jmh_secondary(e, "alloc.rate.norm")
                got[floors[floor] if floor else e.get("params", {}).get("impl")] = (
                    raw_scores(e["primaryMetric"]), alloc.get("score") if alloc else None)
        return got

    w("| get+put pairs | impl | ops/us (min-max) | B/op | vs | ratio (worst-best) | goal |")
    w("|---|---|---|---|---|---|---|")
    for name, threads, base, goal in (("fastpath_getput_t2", 2, "LongAdder", 10.0),
                                      ("fastpath_getput_t1", 1, "AtomicLong", 5.0)):
        got = impls(name)
        for impl in ("PercpuRefOwned", "PercpuRefShared", "LongAdder", "AtomicLong", "PercpuRefAtomic", "Empty",
                     "floor: section", "floor: count"):
            if impl not in got:
                continue
            vals, alloc = got[impl]
            st = spread(vals)
            ratio, verdict_txt, vs = "", "", ""
            if impl in ("PercpuRefOwned", "PercpuRefShared", "floor: section", "floor: count") and base in got:
                b = spread(got[base][0])
                ratio = "%.2fx (%.2f-%.2f)" % (st["median"] / b["median"], st["min"] / b["max"], st["max"] / b["min"])
                vs = base
                if impl == "PercpuRefOwned":
                    verdict_txt = ">= %.0fx: %s" % (goal, "**PASS**" if st["median"] / b["median"] >= goal else "**MISS**")
            w("| %d thread%s | %s | %.1f (%.1f-%.1f) | %s | %s | %s | %s |" % (
                threads, "s" if threads > 1 else "", impl, st["median"], st["min"], st["max"],
                "%.4f" % alloc if alloc is not None else "?", vs, ratio, verdict_txt))
    w("")
    w("`Empty` is the same benchmark call with no counter in it: the harness's own cost per call, a ceiling no "
      "counter can pass. The floors (`CounterBench.floorSection`, `floorCount`) bound any owned-cell counter on this "
      "machine: `floor: section` is PercpuRef's section for a get and a put at a fixed cell of the "
      "thread's own (no slot lookup, constant indices), `floor: count` only the two words loaded, incremented and "
      "stored. Each pair's load waits for the previous pair's store to the same word (store-to-load forwarding, "
      "about 5 cycles): that chain, not the section, sets the floor. Only a cell whose address the JIT keeps in one "
      "register across calls escapes it (the CPU then forwards at no cost), and a thread's cell, looked up after "
      "the section's ordered accesses on every call, is not one: a goal above the floor is out of reach for a "
      "counter kept in per-thread memory.")
    for name, threads, base, goal in (("fastpath_getput_t2", 2, "LongAdder", 10.0),
                                      ("fastpath_getput_t1", 1, "AtomicLong", 5.0)):
        got = impls(name)
        if "Empty" in got and base in got and "PercpuRefOwned" in got:
            target = goal * spread(got[base][0])["median"]
            ceiling = spread(got["Empty"][0])["median"]
            own = spread(got["PercpuRefOwned"][0])["median"]
            w("At %d thread%s the goal (%.0fx %s) is %.0f ops/us, the ceiling %.0f: %s Per thread a pair costs "
              "%.2f ns on owned cells, %.2f ns with no counter at all." % (
                  threads, "s" if threads > 1 else "", goal, base, target, ceiling,
                  "the harness leaves room for it, so the miss is the counter's own cost." if ceiling > target
                  else "the harness itself is below it.", 1000.0 * threads / own, 1000.0 * threads / ceiling))
    w("")
    floor_rows = []
    for name, threads in (("fastpath_getput_t2", 2), ("fastpath_getput_t1", 1)):
        got = impls(name)
        if "PercpuRefOwned" in got and "floor: count" in got:
            own, fl = spread(got["PercpuRefOwned"][0]), spread(got["floor: count"][0])
            floor_rows.append((threads, own, fl))
    if floor_rows:
        w("")
        w("Owned cells against the floor of counting in memory, same run (issue 33's goal: >= 0.8x `floor: count`):")
        w("")
        w("| threads | owned ops/us | floor: count ops/us | owned / floor (worst-best) | goal |")
        w("|---|---|---|---|---|")
        for threads, own, fl in floor_rows:
            r = own["median"] / fl["median"]
            w("| %d | %.1f | %.1f | %.2fx (%.2f-%.2f) | >= 0.8x: %s |" % (
                threads, own["median"], fl["median"], r, own["min"] / fl["max"], own["max"] / fl["min"],
                "**PASS**" if r >= 0.8 else "**MISS**"))
    w("")
    for name in ("fastpath_getput_t2", "fastpath_getput_t1"):
        w("    %s" % R.cmd(name))
    w("")
    rows = []
    for e in jmh_entries(os.path.join(out, "fastpath_switch.json")):
        sw = e.get("secondaryMetrics", {}).get("switcher")
        if sw:
            rows.append((e.get("params", {}).get("mode"), sw.get("scorePercentiles", {})))
    if rows:
        w("Switch to atomic and back (`switchToAtomicSync` + `switchToPercpu`, one thread) while two other threads "
          "run get/put pairs on the same counter (3 threads on 2 cores), latency sampled by JMH:")
        w("")
        w("| cells | p50 (us) | p90 (us) | p99 (us) | p99.9 (us) | max (us) | goal |")
        w("|---|---:|---:|---:|---:|---:|---|")
        for mode, pct in sorted(rows, key=lambda r: r[0] != "PERCPU"):
            goal_txt = ""
            if mode == "PERCPU":
                goal_txt = "p99 < 100 us: %s" % ("**PASS**" if pct.get("99.0", 1e9) < 100 else "**MISS**")
            w("| %s | %.1f | %.1f | %.1f | %.1f | %.0f | %s |" % (
                "owned (PERCPU)" if mode == "PERCPU" else "shared (PERCPU_SHARED)", pct.get("50.0", 0),
                pct.get("90.0", 0), pct.get("99.0", 0), pct.get("99.9", 0), pct.get("100.0", 0), goal_txt))
        w("")
        w("    %s" % R.cmd("fastpath_switch"))
        w("")
    eng = ab_rows(R, (("fastpath_randread", "4 KiB randread"), ("fastpath_randwrite", "4 KiB randwrite")),
                  "array percpu", "array percpu_shared")
    if eng:
        w("The engine: the same array on memory members, 2 jobs, with owned cells (`--counters percpu`) and shared "
          "cells (`percpu-shared`: the array's `nr_pending`, `active_aligned_reads` and configuration semaphore "
          "all on the fallback), in turn in every round; ratio owned / shared per round, median (min-max).")
        w("")
        w("| job | shared IOPS (CV) | owned IOPS (CV) | owned / shared | goal |")
        w("|---|---|---|---|---|")
        for name, what, own, shared, r in eng:
            ok = r and r["min"] >= 1.0
            w("| %s | %s (%.1f%%) | %s (%.1f%%) | %s | >= 1.0x beyond the spread: %s |" % (
                what, fmt_count(shared["iops"]["median"]), 100 * shared["iops"]["cv"], fmt_count(own["iops"]["median"]),
                100 * own["iops"]["cv"], "%.3fx (%.3f-%.3f)" % (r["median"], r["min"], r["max"]) if r else "n/a",
                "**PASS**" if ok else ("**MISS**" if r and r["median"] < 1.0 else "within the spread")))
        w("")
        for name, _, _, _, _ in eng:
            w("    %s" % R.cmd(name))
        w("")
    w(read_text(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fastpath-notes.md"), "").rstrip())
    w("")
    asm = read_text(os.path.join(out, "fastpath_asm.txt"), "")
    if asm:
        w("Counted in the machine code (`bench/counters-asm`: C2's code of a get+put loop on an in-flight counter, "
          "printed through hsdis and disassembled with objdump):")
        w("")
        for line in asm.rstrip().splitlines():
            w("    " + line)
        w("")
    return L


def rwsem_writer_rows(path):
    """(pollers, percentiles) of the writer in each group of a RwSemaphoreWriterBench JSON."""
    order = {"writerAlone": 0, "writerBesideOne": 1, "writerBesideFour": 4}
    rows = []
    for e in jmh_entries(path):
        if e["benchmark"].endswith(".pollers0"):
            rows.append((0, e["primaryMetric"].get("scorePercentiles", {})))
        for k, v in e.get("secondaryMetrics", {}).items():
            if k in order and k != "writerAlone":
                rows.append((order[k], v.get("scorePercentiles", {})))
    return sorted(rows, key=lambda r: r[0])


def rwsem_section(R, out):
    """Issue 19's writer starvation: the semaphore's writer latency beside tryReadLock pollers (JMH, sampled)."""
    L = []
    w = L.append
    after = rwsem_writer_rows(os.path.join(out, "rwsem.json"))
    before = rwsem_writer_rows(os.path.join(out, "rwsem_before.json"))
    w("## Configuration semaphore: a writer beside tryReadLock pollers")
    w("")
    if not after:
        w("Not measured in this run (`bench/run-benchmarks --only rwsem` measures it).")
        w("")
        return L
    w("`PercpuRwSemaphore.writeLock()` + `writeUnlock()` latency, sampled by JMH, while 0, 1 or 4 other threads "
      "poll `tryReadLock()` (more threads than cores with 4). The review that filed the issue measured the first "
      "implementation's writer starved by pollers (every failed poll put +1 and -1 in a cell the writer sums): "
      "p50 32 us with one poller, 8 ms with four, 164 ms with 64 (max 1.07 s). \"before\" is that implementation "
      "(ba7f268, with this benchmark class added) run just before \"after\" on this machine.")
    w("")
    w("    %s" % R.cmd("rwsem"))
    w("")
    w("| pollers | code | p50 (us) | p90 (us) | p99 (us) | p99.9 (us) | max (us) |")
    w("|---:|---|---:|---:|---:|---:|---:|")
    for label, rows in (("before", before), ("after", after)):
        for pollers, pct in rows:
            w("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f |" % (pollers, label, pct.get("50.0", 0), pct.get("90.0", 0),
                                                             pct.get("99.0", 0), pct.get("99.9", 0), pct.get("100.0", 0)))
    w("")
    w("On 2 cores the starvation does not show in this benchmark, before or after: with five threads on two "
      "cores a poller is rarely between its add and its back-out when the writer sums. What the fix changes is "
      "the mechanism, which `PercpuRwSemaphoreTest.failedPollsNeitherWakeNorHoldBackAWaitingWriter` counts: "
      "20,000 failed polls made a parked writer sum 292 more times before, none after. The maxima are the "
      "machine's scheduling (the no-poller rows have them too).")
    w("")
    return L


def engine_ab_section(out):
    """The stripe engine before and after, from bench/engine-ab (same machine, one run)."""
    L, m = section_start(out, "The stripe engine before and after (A/B)", "ab_engine_machine.txt", "BEFORE_JAR=... bench/engine-ab")
    w = L.append
    if not m:
        return L
    rows = load_lines(os.path.join(out, "ab_engine.jsonl"))
    w("Each round runs the same jobs with the jar built at %s (before) and at %s (after), back to back; each "
      "figure is the job's own ratio to the raw memory run beside it in the same JVM. Measured %s, %s, %s cores, "
      "load average %s at the start and %s at the end, %s rounds x %s s." % (
          m.get("before", "?"), m.get("after", "?"), m.get("date", "?"), m.get("cpu", "?"), m.get("cores", "?"),
          m.get("loadavg_start", "?"), m.get("loadavg_end", "?"), m.get("repeat", "?"), m.get("runtime", "?")))
    w("")
    w("| job (memory members, 2 jobs) | before: ratio median (min-max) | after: ratio median (min-max) | after / before |")
    w("|---|---|---|---|")
    for job, label in (("randread", "4 KiB random reads, array / raw"), ("randwrite", "4 KiB random writes, array / raw"),
                       ("fullstripe", "full-stripe writes, array / raw members")):
        b = [r["ratio"] for r in rows if r["job"] == job and r["side"] == "before" and r["ratio"] is not None]
        a = [r["ratio"] for r in rows if r["job"] == job and r["side"] == "after" and r["ratio"] is not None]
        if not a or not b:
            continue
        sb, sa = spread(b), spread(a)
        w("| %s | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.2fx |" % (label, sb["median"], sb["min"], sb["max"],
                                                                sa["median"], sa["min"], sa["max"],
                                                                sa["median"] / sb["median"]))
    w("")
    for line in read_text(os.path.join(out, "ab_engine.cmd")).splitlines():
        w("    %s" % line)
    w("")
    return L


def bitmap_section(out):
    """The write-intent bitmap issue's resync and re-add figures, from bench/bitmap-resync."""
    L, m = section_start(out, "Write-intent bitmap: resync and re-add after 1% of writes", "bitmap_machine.txt", "bench/bitmap-resync")
    w = L.append
    if not m:
        return L
    rows = load_lines(os.path.join(out, "bitmap_rounds.jsonl"))
    w("4 file members of %s (page cache, %s), %s%% of the array written as one region; each time is the pass's "
      "own duration as the command reports it (start-up, assembly and the closing flush left out of all alike). Measured %s, commit %s, %s, %s cores, load average %s at "
      "the start and %s at the end, %s rounds." % (m.get("member", "?"), m.get("dir_fs", "?"), m.get("percent", "?"),
                                                  m.get("date", "?"), m.get("commit", "?"), m.get("cpu", "?"),
                                                  m.get("cores", "?"), m.get("loadavg_start", "?"),
                                                  m.get("loadavg_end", "?"), m.get("repeat", "?")))
    w("")
    w("| round | full resync (s) | bitmap resync (s), bits dirty | ratio | full rebuild (s) | re-add (s), bits dirty | ratio |")
    w("|---|---:|---|---:|---:|---|---:|")
    rs, ra = [], []
    for r in rows:
        a = r["bitmap_resync_s"] / r["full_resync_s"] if r["full_resync_s"] else None
        b = r["readd_s"] / r["full_rebuild_s"] if r["full_rebuild_s"] else None
        if a is not None:
            rs.append(a)
        if b is not None:
            ra.append(b)
        w("| %d | %.2f | %.2f (%s) | %s | %.2f | %.2f (%s) | %s |" % (
            r["round"], r["full_resync_s"], r["bitmap_resync_s"], r["resync_dirty"], "%.3f" % a if a else "n/a",
            r["full_rebuild_s"], r["readd_s"], r["readd_dirty"], "%.3f" % b if b else "n/a"))
    w("")
    w("| target | ratio median (min-max) | goal | verdict |")
    w("|---|---|---:|---|")
    for label, vals in (("resync after a crash with the bitmap / full resync", rs),
                        ("re-add of a member away during the writes / full rebuild", ra)):
        if vals:
            st = spread(vals)
            v = "**PASS**" if st["median"] <= 0.05 else "**MISS** (%.0f%% over)" % (100 * (st["median"] / 0.05 - 1))
            w("| %s | %.3fx (%.3f-%.3f) | <= 0.05x | %s |" % (label, st["median"], st["min"], st["max"], v))
    w("")
    for name in ("bitmap_full_resync", "bitmap_bitmap_resync", "bitmap_readd", "bitmap_full_rebuild"):
        cmd = read_text(os.path.join(out, name + ".cmd")).strip()
        if cmd:
            w("    %s" % cmd)
    w("")
    w("Command: `bench/bitmap-resync` (its header says what each round does), or `bench/run-benchmarks --only bitmap`.")
    w("")
    return L


def startup_section(out):
    """The operator CLI issue's start-up row, from bench/startup."""
    L, m = section_start(out, "Start-up of the short commands", "startup_machine.txt", "bench/startup")
    w = L.append
    if not m:
        return L
    rows = load_lines(os.path.join(out, "startup_rounds.jsonl"))
    w("Whole-process wall and CPU (user + system) seconds from `/usr/bin/time`, one run of each command per round, in "
      "turn. Measured %s, commit %s (previous launcher: `git show %s:raid`, same jar), %s, %s cores, %s, load average "
      "%s at the start and %s at the end, %s rounds." % (
          m.get("date", "?"), m.get("commit", "?"), m.get("previous", "?"), m.get("cpu", "?"), m.get("cores", "?"),
          m.get("java", "?"), m.get("loadavg_start", "?"), m.get("loadavg_end", "?"), m.get("repeat", "?")))
    w("")
    w("| command | wall median (min-max) | CPU median (min-max) | goal | verdict |")
    w("|---|---|---|---:|---|")
    labels = (("examine", "`raid examine MEMBER` (./raid: class-data archive, C1, serial GC)", True),
              ("examine_previous", "`raid examine MEMBER`, previous launcher", False),
              ("detail", "`raid detail MEMBER x4` (./raid)", True),
              ("detail_previous", "`raid detail MEMBER x4`, previous launcher", False),
              ("mdadm_examine", "`mdadm --examine MEMBER` (for scale)", False))
    for name, label, goal in labels:
        wall = [r["wall"] for r in rows if r["name"] == name]
        cpu = [r["cpu"] for r in rows if r["name"] == name]
        if not wall:
            continue
        sw, sc = spread(wall), spread(cpu)
        verdict = ("**PASS**" if sw["median"] <= 0.5 else "**MISS**") if goal else ""
        w("| %s | %.2f s (%.2f-%.2f) | %.2f s (%.2f-%.2f) | %s | %s |" % (
            label, sw["median"], sw["min"], sw["max"], sc["median"], sc["min"], sc["max"],
            "<= 0.5 s" if goal else "", verdict))
    w("")
    w("`/usr/bin/time` counts in 10 ms steps: 0.00 is under 10 ms.")
    w("")
    w("Command: `bench/startup`, or `bench/run-benchmarks --only startup`.")
    w("")
    return L


def render(out):
    R = Results(out)
    m = R.machine
    L = []
    w = L.append
    w("# raidfive benchmarks")
    w("")
    w("Generated by `bench/run-benchmarks` (do not edit by hand: run the script again). Every figure below comes from")
    w("one run of that script on one machine, ours and the peers' in the same run; only ratios taken in the same run")
    w("mean anything, and each comes with its spread over repeats.")
    w("")
    w("## Machine and run")
    w("")
    w("| | |")
    w("|---|---|")
    for k, label in (("cpu", "CPU (lscpu model)"), ("cores", "cores"), ("memory", "memory"), ("jdk", "JDK"),
                     ("kernel", "kernel"), ("commit", "commit"), ("date", "date"),
                     ("loadavg_start", "load average at start"), ("loadavg_end", "load average at end")):
        w("| %s | %s |" % (label, m.get(k, "?")))
    w("| repeats x runtime | %s rounds x %s s measured (+%s s ramp) per configuration, after one %s s warm-up run "
      "per variant; peers %s times each |" % (m.get("repeat", "?"), m.get("runtime", "?"), m.get("ramp", "?"),
                                               m.get("warmup", "?"), m.get("repeat", "?")))
    w("| script time | %s s |" % m.get("elapsed", "?"))
    w("")
    try:
        load = float(m.get("loadavg_start", "0").split()[0])
        cores = int(m.get("cores", "2"))
        if load > cores * 0.5:
            w("> The load average at the start (%s on %d cores) shows other work on the machine during this run: "
              "the spread columns say how much that moved the figures." % (m.get("loadavg_start"), cores))
            w("")
    except ValueError:
        pass
    w("## Targets")
    w("")
    w("Ratios are medians of per-round ratios (the two sides run back to back in each round), with the per-round")
    w("min and max; for the peers (run separately) the range pairs our min with their max and vice versa.")
    w("")
    w("| target | raidfive | reference | ratio median (min-max) | goal | verdict |")
    w("|---|---|---|---|---:|---|")
    for key, title, fig, ref, ratio, goal in R.targets():
        w("| %s | %s | %s | %s | %s | %s |" % (
            title, fig or "n/a", ref or "n/a",
            "%.2fx (%.2f-%.2f)" % (ratio["median"], ratio["min"], ratio["max"]) if ratio else "n/a",
            ">= %.2fx" % goal if goal is not None else "none",
            verdict(ratio and ratio["median"], goal) if goal is not None else "(context)"))
    crow = R.counter_rows()
    for name, a, p, ratio, noise, ok in crow:
        w("| percpu counters never slower than atomic beyond the spread (%s) | percpu %s IOPS | atomic %s IOPS | "
          "%.3fx (%.3f-%.3f) | >= %.3fx (1 - max CV) | %s |" % (
              name, fmt_count(p["iops"]["median"]), fmt_count(a["iops"]["median"]), ratio["median"], ratio["min"],
              ratio["max"], 1 - noise, "**PASS**" if ok else "**MISS**"))
    w("")
    if m.get("counters") == "interim":
        w("> Counters: this build's `org.raidfive.counter.PercpuRef` is still the interim atomic-only stand-in (the")
        w("> striped implementation is on its way from the counter branch), so `atomic` and `percpu` run the same")
        w("> code here: the percpu/atomic rows measure the noise floor of an A/B on this machine, not the change.")
        w("")

    missed = [(k, t, r, g) for k, t, _, _, r, g in R.targets() if r and g is not None and r["median"] < g]
    if missed:
        w("## Misses: by how much, and what the profile shows")
        w("")
        seen = set()
        for key, title, ratio, goal in missed:
            w("- %s: %.2fx against a goal of %.2fx, %.0f%% short." % (title, ratio["median"], goal,
                                                                      100 * (goal - ratio["median"]) / goal))
        for key, title, ratio, goal in missed:
            if key in seen:
                continue
            seen.add(key)
            if key.startswith("nbd_"):
                continue  # profiled in the NBD section
            if key == "rebuild":
                lines = profile_section(out, key, threads=("raid-recover",), what="the rebuild thread")
            else:
                lines = profile_section(out, key)
            if lines:
                w("")
                w("### Profile: %s" % key)
                w("")
                L.extend(lines)
        notes = read_text("bench/NOTES.md")
        if notes:
            w("")
            L.extend(notes.splitlines())
        w("")

    w("## raid bench runs")
    w("")
    for name, title in (("randread", "4 KiB random reads"), ("randwrite", "4 KiB random writes"),
                        ("seqwrite", "Full-stripe sequential writes"),
                        ("randread_qd8", "4 KiB random reads at iodepth 8 (AsyncIo)"),
                        ("randread_degraded", "4 KiB random reads, degraded (one member failed)")):
        rep = R.reports.get(name)
        if not rep:
            continue
        w("### %s" % title)
        w("")
        w("    %s" % R.cmd(name))
        w("")
        w("`%s`" % rep["config"]["describe"])
        w("")
        L.extend(report_table(rep))
        for r in rep.get("ratios", []):
            st = r["ratio"]
            w("")
            w("Ratio %s / %s: median %.3f (per-round %.3f-%.3f, %d rounds)." % (
                r["numerator"], r["denominator"], st["median"], st["min"], st["max"], st["n"]))
        if os.path.exists(os.path.join(out, name + ".svg")):
            w("")
            w("![%s](%s)" % (title, os.path.join(out, name + ".svg")))
        w("")

    rb = (R.peers.get("rebuild") or [None])[0]
    if rb:
        w("### Rebuild onto a spare (`RebuildBench`)")
        w("")
        w("    %s" % R.cmd("rebuild"))
        w("")
        w("Each round, back to back: one member read end to end on one thread in 1 MiB requests (the goal's reference);")
        w("a filled %d-member array (%s per member, chunk %dK) with one member failed and removed, rebuilt onto a fresh"
          % (rb["disks"], fmt_size(rb["member_bytes"]), rb["chunk"] // 1024))
        w("memory spare without a speed limit; then the rebuild's arithmetic alone: %d filled memory members XORed in"
          % (rb["disks"] - 1))
        w("place into another, on one thread and on two (no array, no locks, no checkpoints).")
        w("")
        bare1 = rb.get("bare_xor_1thread_bytes_per_s") or []
        bare2 = rb.get("bare_xor_2threads_bytes_per_s") or []
        w("| round | member sequential read | rebuild | rebuild / read | bare XOR, 1 thread | rebuild / bare XOR | bare XOR, 2 threads |")
        w("|---:|---|---|---:|---|---:|---|")
        for i, (rd, rbd) in enumerate(zip(rb["read_bytes_per_s"], rb["rebuild_bytes_per_s"])):
            b1 = bare1[i] if i < len(bare1) else None
            b2 = bare2[i] if i < len(bare2) else None
            w("| %d | %s | %s | %.3f | %s | %s | %s |" % (
                i + 1, fmt_bw(rd), fmt_bw(rbd), rbd / rd, fmt_bw(b1) if b1 else "n/a",
                "%.3f" % (rbd / b1) if b1 else "n/a", fmt_bw(b2) if b2 else "n/a"))
        w("")

    w("## Peers (same run)")
    w("")
    w("| command | figure, each repeat | median |")
    w("|---|---|---|")
    for name, key, unit in (("isal4", "data_GBps", "GB/s"), ("isal8", "data_GBps", "GB/s"),
                            ("fio_randread", "iops", "IOPS"), ("fio_randwrite", "iops", "IOPS")):
        rows = [r for r in R.peers.get(name, []) if key in r]
        if rows:
            vals = [r[key] for r in rows]
            w("| `%s` | %s | %s %s |" % (R.cmd(name), ", ".join(str(v) for v in vals),
                                         fmt_count(statistics.median(vals)) if unit == "IOPS" else
                                         "%.1f" % statistics.median(vals), unit))
    w("")
    w("`fio-tmpfs` is fio's psync engine on a 1 GiB file in /dev/shm (the kernel's page-cache path, one syscall per")
    w("I/O); `xor-isal` is ISA-L's AVX2/AVX-512 `xor_gen` over DISKS buffers (data_GBps counts the DISKS-1 sources).")
    w("")

    w("## JMH suites")
    w("")
    w("### XOR kernel (`Xor.parity`, sources of members-1 chunks; GB/s of sources)")
    w("")
    w("    %s" % R.cmd("xor"))
    w("")
    w("| members | chunk | GB/s median (min-max over iterations) | alloc B/op | ISA-L xor_gen GB/s (same DISKS, 64 KiB) |")
    w("|---:|---:|---|---:|---|")
    for e in jmh_entries(os.path.join(out, "xor.json")):
        p = e.get("params", {})
        b = jmh_secondary(e, "bytes")
        if not b:
            continue
        s = spread([x / 1e9 for x in raw_scores(b)])
        alloc = jmh_secondary(e, "alloc.rate.norm")
        isal = isal_median(R.peers.get("isal%s" % p.get("members"), []), int(p.get("members", 0)))
        w("| %s | %s | %.1f (%.1f-%.1f) | %s | %s |" % (
            p.get("members"), p.get("chunk"), s["median"], s["min"], s["max"],
            "%.3f" % alloc["score"] if alloc else "n/a",
            "%.1f" % isal["median"] if isal and p.get("chunk") == "65536" else ""))
    w("")
    for name, title in (("arrayio", "Whole-array 4 KiB random I/O, 2 threads (`ArrayIoBench`)"),
                        ("layout", "Layout mapping (`LayoutBench`)"),
                        ("counter1", "Counters, 1 thread (`CounterBench`, get+put pairs, ops/us)"),
                        ("counter2", "Counters, 2 threads (`CounterBench`, get+put pairs, ops/us)")):
        entries = jmh_entries(os.path.join(out, name + ".json"))
        if not entries:
            if name.startswith("counter"):
                w("### %s" % title)
                w("")
                w("`CounterBench` was not in the tree when this ran; the script runs it when it is:")
                w("")
                w("    java -jar raid-bench/target/benchmarks.jar CounterBench -wi 1 -w 1 -i 3 -r 1 -f 1")
                w("")
            continue
        w("### %s" % title)
        w("")
        w("    %s" % R.cmd(name))
        w("")
        w("| benchmark | params | score | error | unit | alloc B/op |")
        w("|---|---|---:|---:|---|---:|")
        for e in entries:
            pm = e["primaryMetric"]
            alloc = jmh_secondary(e, "alloc.rate.norm")
            params = ", ".join("%s=%s" % kv for kv in sorted(e.get("params", {}).items()))
            w("| %s | %s | %.4g | %.2g | %s | %s |" % (e["benchmark"].split(".")[-2] + "." + e["benchmark"].split(".")[-1],
                                                    params, pm["score"], pm.get("scoreError") or 0, pm["scoreUnit"],
                                                    "%.3f" % alloc["score"] if alloc else ""))
        w("")

    L.extend(nbd_section(R))
    L.extend(hardening_section(out))
    L.extend(lockouts_section(out))
    L.extend(real_section(out))
    L.extend(engine_ab_section(out))
    L.extend(ppl_section(R))
    L.extend(bitmap_section(out))
    L.extend(live_counters_section(R, out))
    L.extend(rwsem_section(R, out))
    L.extend(fastpath_section(R, out))
    L.extend(startup_section(out))
    # A/B figures measured by hand with farm-bench (their command and machine are in the text)
    for name in ("assembly-ab.md", "io-backends.md", "reshape.md"):
        ab = read_text(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "").rstrip()
        if ab:
            L.extend(ab.splitlines())
            w("")
    w("## Running the suites by hand")
    w("")
    w("    mvn -B -q install -DskipTests                    # raid-bench/target/benchmarks.jar, raid-cli/target/raid.jar")
    w("    bench/run-benchmarks                             # everything above, regenerates this file")
    w("    raid bench --rw randread --bs 4k --numjobs 2 --target raw,array --counters both --repeat 5")
    w("    java -cp raid-cli/target/raid.jar org.raidfive.bench.RebuildBench --disks 4 --member-size 1g --repeat 3")
    w("    java -jar raid-bench/target/benchmarks.jar XorBench -prof gc        # XOR, 4K..1M x 3..8 members")
    w("    java -jar raid-bench/target/benchmarks.jar LayoutBench -prof gc")
    w("    java -jar raid-bench/target/benchmarks.jar ArrayIoBench -prof gc")
    w("    java -jar raid-bench/target/benchmarks.jar CounterBench -prof gc")
    w("")
    return "\n".join(L)


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        for name in Results(argv[2]).missed():
            print(name)
        return 0
    if len(argv) == 3 and argv[1] == "--check-nbd":
        for name in Results(argv[2]).nbd_missed():
            print(name)
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    print(render(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
