#!/usr/bin/env python3
"""Summarise `go test -bench 'StaticBuild|StaticQuery'` output (filters/
static_bench_test.go): per implementation the median over rounds, and per
pair the median of the per-round ratios ours/anchor (rounds interleave the
two, so a per-round ratio cancels most machine noise). Usage:
    python3 fuse_bench_summary.py < bench.txt
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
