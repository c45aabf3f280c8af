#!/usr/bin/env python3
"""Summarise `go test -bench 'StaticBuild|StaticQuery'` output (filters/
static_bench_test.go): per implementation the median over rounds, and per
pair the median of the per-round ratios ours/anchor (rounds interleave the
two, so a per-round ratio cancels most machine noise). Usage:
    python3 fuse_bench_summary.py [paired.txt] < bench.txt
(the optional file holds BenchmarkStaticPaired* output)
"""
import re, statistics, sys
from collections import defaultdict

PAIRS = [("sievekv-Xor8", "fastfilter-Xor8"),
         ("sievekv-BinaryFuse8", "fastfilter-BinaryFuse8"),
         ("sievekv-BinaryFuse16", "fastfilter-BinaryFuse16"),
         ("sievekv-BinaryFuse8-reusedBuilder", "fastfilter-BinaryFuse8"),
         ("sievekv-BinaryFuse3x8", "fastfilter-BinaryFuse8"),
         ("sievekv-BinaryFuse4x8", "fastfilter-BinaryFuse8"),
         ("sievekv-BinaryFuse3x11", "fastfilter-BinaryFuse8"),
         ("sievekv-BinaryFuse4x16", "fastfilter-BinaryFuse16")]

vals = defaultdict(dict)  # (bench, kind) -> name -> {round: value}
pat = re.compile(r"^Benchmark(Static\w+)/round(\d+)/(?:(present|absent)/)?([\w.-]+?)-\d+\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) ns/key)?")
for line in sys.stdin:
    m = pat.match(line)
    if not m:
        continue
    bench, rnd, kind, name, nsop, nskey = m.groups()
    v = float(nskey) if nskey else float(nsop)
    vals[(bench, kind or "build")].setdefault(name, {})[int(rnd)] = v

for (bench, kind), impls in sorted(vals.items()):
    unit = "ns/key" if bench == "StaticBuild" else "ns/query"
    print(f"\n{bench} {kind} ({unit}, median of {max(len(r) for r in impls.values())} rounds)")
    for name, rounds in impls.items():
        print(f"  {name:38s} {statistics.median(rounds.values()):9.1f}")
    for ours, anchor in PAIRS:
        if ours in impls and anchor in impls:
            rs = [impls[ours][r] / impls[anchor][r] for r in impls[ours] if r in impls[anchor]]
            print(f"  ratio {ours} / {anchor}: median {statistics.median(rs):.3f}  "
                  f"(per round: {', '.join(f'{x:.2f}' for x in rs)})")

# Paired CPU-time benchmarks (BenchmarkStaticPairedBuild / ...Query): median
# over -count runs of ours, anchor and the ratio each run reported.
paired = defaultdict(lambda: defaultdict(list))
ppat = re.compile(r"^BenchmarkStaticPaired(Build|Query)/(.+?)-\d+\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) anchor-cpu-ns/\w+\s+([\d.]+) ours-cpu-ns/\w+\s+([\d.]+) ratio")
for line in open(sys.argv[1]) if len(sys.argv) > 1 else []:
    m = ppat.match(line)
    if m:
        kind, name, a, o, r = m.groups()
        for k, v in (("anchor", a), ("ours", o), ("ratio", r)):
            paired[(kind, name)][k].append(float(v))
if paired:
    print("\n| benchmark | ours CPU ns | anchor CPU ns | ratio (median) | ratios per run |")
    print("|---|---|---|---|---|")
    for (kind, name), d in paired.items():
        print(f"| {kind} {name} | {statistics.median(d['ours']):.1f} | {statistics.median(d['anchor']):.1f} | "
              f"**{statistics.median(d['ratio']):.3f}** | {', '.join(f'{x:.3f}' for x in d['ratio'])} |")
